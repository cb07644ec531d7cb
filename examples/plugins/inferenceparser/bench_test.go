package inferenceparser_test

import (
	"context"
	"testing"

	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/sdk/gateway"
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
