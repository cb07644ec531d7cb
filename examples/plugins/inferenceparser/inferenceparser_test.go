package inferenceparser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
	"github.com/abkit/abkit/sdk/sse"
)

const chatStream = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{"content":"lo, wörld"},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}

data: [DONE]

`

const messagesStream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":25,"output_tokens":1}}}

event: ping
data: {"type": "ping"}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me see."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hel"}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"lo, wörld"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}

event: message_stop
data: {"type":"message_stop"}

`

// perEvent cuts a stream into the frames a host delivers (P19).
func perEvent(t *testing.T, body []byte) [][]byte {
	t.Helper()
	var f sse.Framer
	var out [][]byte
	emit := func(raw []byte, _ bool) error {
		out = append(out, append([]byte(nil), raw...))
		return nil
	}
	if err := f.Feed(body, emit); err != nil {
		t.Fatal(err)
	}
	if _, err := f.End(emit); err != nil {
		t.Fatal(err)
	}
	return out
}

func run(t *testing.T, contentType string, chunks [][]byte) (inferenceparser.Result, bool) {
	t.Helper()
	ctx := context.Background()
	p := plugintest.New(t, inferenceparser.Factory(), "")
	r := plugintest.NewRun("POST", "/v1/chat/completions", []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if a := r.Request(ctx, p); !a.IsContinue() {
		t.Fatalf("OnRequest: %+v", a)
	}
	r.Respond(200, contentType)
	if a, _ := r.Frames(ctx, chunks, p); !a.IsContinue() {
		t.Fatalf("frames: %+v", a)
	}
	return inferenceparser.FromExchange(r.Ex)
}

// chunkings returns the ways the tests cut one body: whole, per event,
// per byte, fixed sizes and random cuts.
func chunkings(t *testing.T, body []byte) map[string][][]byte {
	c := map[string][][]byte{
		"whole":     {body},
		"per-event": perEvent(t, body),
		"per-byte":  plugintest.Split(body, 1),
		"7-bytes":   plugintest.Split(body, 7),
		"64-bytes":  plugintest.Split(body, 64),
	}
	for seed := range uint64(5) {
		c[fmt.Sprintf("random-%d", seed)] = plugintest.SplitRandom(body, seed)
	}
	return c
}

// P19 P22 P24: the extension at last=true is the same for every chunking,
// in both styles, and matches what the stream says.
func TestStreamChunkingIndependent_P19_P24(t *testing.T) {
	wantCommon := func(style, id, model, reasoning, finish string, usage inferenceparser.Usage, callID string) inferenceparser.Result {
		return inferenceparser.Result{
			Request:      &inferenceparser.Request{Model: "m", Stream: true, Messages: []inferenceparser.Message{{Role: "user", Text: "hi"}}},
			Style:        style,
			Transport:    inferenceparser.TransportSSE,
			ID:           id,
			Model:        model,
			Content:      "Hello, wörld",
			Reasoning:    reasoning,
			ToolCalls:    []inferenceparser.ToolCall{{ID: callID, Name: "get_weather", Arguments: `{"city":"Paris"}`}},
			FinishReason: finish,
			Usage:        &usage,
			Done:         true,
		}
	}
	chat := wantCommon(inferenceparser.StyleChatCompletions, "chatcmpl-1", "gpt-x", "", "tool_calls", inferenceparser.Usage{InputTokens: 12, OutputTokens: 7, TotalTokens: 19}, "call_1")
	chat.Events = 9
	msgs := wantCommon(inferenceparser.StyleMessages, "msg_1", "claude-x", "Let me see.", "tool_use", inferenceparser.Usage{InputTokens: 25, OutputTokens: 42, TotalTokens: 67}, "toolu_1")
	msgs.Events, msgs.Pings = 16, 2

	for _, tc := range []struct {
		name string
		body string
		want inferenceparser.Result
	}{
		{"chat-completions", chatStream, chat},
		{"messages", messagesStream, msgs},
		{"messages-crlf", strings.ReplaceAll(messagesStream, "\n", "\r\n"), msgs},
	} {
		for how, chunks := range chunkings(t, []byte(tc.body)) {
			for _, ct := range []string{"text/event-stream; charset=utf-8", ""} {
				t.Run(tc.name+"/"+how+"/ct="+ct, func(t *testing.T) {
					got, ok := run(t, ct, chunks)
					if !ok {
						t.Fatal("no inference extension")
					}
					if !reflect.DeepEqual(got, tc.want) {
						g, _ := json.Marshal(got)
						w, _ := json.Marshal(tc.want)
						t.Fatalf("extension differs\n got %s\nwant %s", g, w)
					}
				})
			}
		}
	}
}

// P22: a JSON body arrives as one frame with last=true; both styles.
func TestJSONBody_P22(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       inferenceparser.Result
	}{
		{"chat-completions", `{"id":"c1","object":"chat.completion","model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there","tool_calls":[{"id":"call_9","type":"function","function":{"name":"lookup","arguments":"{\"q\":1}"}}]},"finish_reason":"tool_calls"},{"index":1,"message":{"role":"assistant","content":"Other"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`,
			inferenceparser.Result{
				Style: inferenceparser.StyleChatCompletions, Transport: inferenceparser.TransportJSON, ID: "c1", Model: "gpt-x",
				Content: "Hi there", ToolCalls: []inferenceparser.ToolCall{{ID: "call_9", Name: "lookup", Arguments: `{"q":1}`}}, FinishReason: "tool_calls",
				Usage: &inferenceparser.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7},
				Choices: []inferenceparser.Choice{
					{Index: 0, Content: "Hi there", ToolCalls: []inferenceparser.ToolCall{{ID: "call_9", Name: "lookup", Arguments: `{"q":1}`}}, FinishReason: "tool_calls"},
					{Index: 1, Content: "Other", FinishReason: "stop"},
				},
				Done: true,
			}},
		{"messages", `{"id":"msg_2","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Sure."},{"type":"tool_use","id":"toolu_2","name":"lookup","input":{"q":1}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":6}}`,
			inferenceparser.Result{
				Style: inferenceparser.StyleMessages, Transport: inferenceparser.TransportJSON, ID: "msg_2", Model: "claude-x",
				Content: "Sure.", ToolCalls: []inferenceparser.ToolCall{{ID: "toolu_2", Name: "lookup", Arguments: `{"q":1}`}}, FinishReason: "tool_use",
				Usage: &inferenceparser.Usage{InputTokens: 5, OutputTokens: 6, TotalTokens: 11}, Done: true,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p := plugintest.New(t, inferenceparser.Factory(), "")
			r := plugintest.NewRun("POST", "/v1/x", nil) // no request body: nothing recorded in OnRequest
			r.Request(ctx, p)
			if _, ok := r.Ex.Extension(inferenceparser.Key); ok {
				t.Fatal("extension set without a request body")
			}
			r.Respond(200, "application/json")
			// The host delivers the whole body as the last frame (P22).
			s := p.(gateway.StreamingResponder)
			buf := []byte(tc.body)
			r.Ctl.Enter(p.Name(), gateway.PhaseFrame, false, false)
			s.OnResponseFrame(ctx, r.Ex, buf, true)
			for i := range buf {
				buf[i] = 'X' // P24: the result must not alias the frame
			}
			got, ok := inferenceparser.FromExchange(r.Ex)
			if !ok || !reflect.DeepEqual(got, tc.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tc.want)
				t.Fatalf("got %s (ok=%v)\nwant %s", g, ok, w)
			}
		})
	}
}

// The request side: messages with string and part-array content, system,
// tool names from either style.
func TestRequestRecorded(t *testing.T) {
	body := `{"model":"claude-x","system":[{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"assistant","content":null}],"tools":[{"name":"t1"},{"type":"function","function":{"name":"t2"}}]}`
	ctx := context.Background()
	p := plugintest.New(t, inferenceparser.Factory(), "")
	r := plugintest.NewRun("POST", "/v1/messages", []byte(body))
	r.Request(ctx, p)
	got, ok := inferenceparser.FromExchange(r.Ex)
	want := inferenceparser.Result{Request: &inferenceparser.Request{
		Model: "claude-x", System: "Be brief.",
		Messages: []inferenceparser.Message{{Role: "user", Text: "a\nb"}, {Role: "assistant"}},
		Tools:    []string{"t1", "t2"},
	}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v (ok=%v), want %+v", got, ok, want)
	}
}

// Extensions cross process boundaries as JSON: the result survives a
// round trip and FromExchange reads the map form.
func TestResultCrossesProcessBoundary(t *testing.T) {
	got, ok := run(t, "text/event-stream", [][]byte{[]byte(messagesStream)})
	if !ok {
		t.Fatal("no extension")
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{})
	ctl.SetExtensions(map[string]any{inferenceparser.Key: m})
	back, ok := inferenceparser.FromExchange(ex)
	if !ok || !reflect.DeepEqual(back, got) {
		t.Fatalf("round trip changed the result:\n%+v\n%+v", back, got)
	}
}

// Malformed data and an upstream error event are recorded, never fatal; a
// stream cut before its end is not Done (P21 still delivers last=true). The
// unterminated tail is not an event (WHATWG, P19) and is dropped.
func TestMalformedAndTruncated(t *testing.T) {
	body := "data: {not json\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"par"
	got, ok := run(t, "text/event-stream", plugintest.Split([]byte(body), 5))
	if !ok {
		t.Fatal("no extension")
	}
	if got.Malformed != 1 || got.Error != "overloaded_error: Overloaded" || got.Done || got.Style != inferenceparser.StyleMessages {
		t.Fatalf("got %+v", got)
	}
}

// P5: the description is one line of at most 80 runes; P2: every instance
// reports the same capabilities.
func TestDescriptionAndCapabilities_P2_P5(t *testing.T) {
	f := inferenceparser.Factory()
	a, b := plugintest.New(t, f, ""), plugintest.New(t, f, "")
	if err := gateway.CheckDescription(a.Capabilities().Description); err != nil {
		t.Fatal(err)
	}
	if !a.Capabilities().Equal(b.Capabilities()) || !a.Capabilities().ReadsBody {
		t.Fatalf("capabilities %+v / %+v", a.Capabilities(), b.Capabilities())
	}
	if _, ok := a.(gateway.StreamingResponder); !ok {
		t.Fatal("not a StreamingResponder")
	}
}
