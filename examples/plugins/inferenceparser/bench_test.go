package inferenceparser_test

import (
	"context"
	"testing"

	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
)

// benchStream parses one whole stream per iteration, one event per frame as
// a host delivers them, and reports the cost per stream.
func benchStream(b *testing.B, body string) {
	frames := perEvent(&testing.T{}, []byte(body))
	p, _ := inferenceparser.Factory().New(nil)
	s := p.(gateway.StreamingResponder)
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{})
		p.OnRequest(ctx, ex)
		ctl.SetResponse(gateway.Response{Status: 200})
		ex.Response.Header.Set("Content-Type", "text/event-stream")
		for _, f := range frames {
			s.OnResponseFrame(ctx, ex, f, false)
		}
		s.OnResponseFrame(ctx, ex, nil, true)
	}
}

func BenchmarkChatCompletionsStream(b *testing.B) { benchStream(b, chatStream) }
func BenchmarkMessagesStream(b *testing.B)        { benchStream(b, messagesStream) }

// Benchmarks on 10,000-event streams of each style: the cost per event
// stays flat and allocations grow only with the extracted content
// (docs/perf.md).
const benchEvents = 10000

func BenchmarkStream10k(b *testing.B) {
	req := `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct{ name, head, event, tail string }{
		{"chat", "", `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"tok{{i}} "},"finish_reason":null}]}` + "\n\n", "data: [DONE]\n\n"},
		{"responses", `event: response.created` + "\n" + `data: {"type":"response.created","response":{"id":"r","model":"m"}}` + "\n\n",
			`event: response.output_text.delta` + "\n" + `data: {"type":"response.output_text.delta","output_index":0,"delta":"tok{{i}} "}` + "\n\n",
			`event: response.completed` + "\n" + `data: {"type":"response.completed","response":{"id":"r","status":"completed","usage":{"input_tokens":1,"output_tokens":2}}}` + "\n\n"},
		{"messages", `event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"m","model":"c"}}` + "\n\n" + `event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n",
			`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok{{i}} "}}` + "\n\n",
			`event: message_stop` + "\n" + `data: {"type":"message_stop"}` + "\n\n"},
		{"gemini", "", `data: {"candidates":[{"content":{"parts":[{"text":"tok{{i}} "}],"role":"model"},"index":0}],"modelVersion":"g"}` + "\r\n\r\n", ""},
	} {
		body := plugintest.Events(tc.head, tc.event, tc.tail, benchEvents)
		b.Run(tc.name, func(b *testing.B) { plugintest.BenchStream(b, inferenceparser.Factory(), req, body) })
		if tc.name == "chat" {
			// The same stream a tenth as long: allocs/event must match.
			short := plugintest.Events(tc.head, tc.event, tc.tail, benchEvents/10)
			b.Run("chat-1k", func(b *testing.B) { plugintest.BenchStream(b, inferenceparser.Factory(), req, short) })
		}
	}
}
