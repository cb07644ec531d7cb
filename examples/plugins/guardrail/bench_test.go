package guardrail_test

import (
	"context"
	"testing"

	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/sdk/gateway"
)

// BenchmarkFrame checks one chat-completions chunk per iteration against
// two rules, carrying text across frames as in a long stream.
func BenchmarkFrame(b *testing.B) {
	p, err := guardrail.Factory().New([]byte(testConfig))
	if err != nil {
		b.Fatal(err)
	}
	s := p.(gateway.StreamingResponder)
	frame := []byte(chatChunk("some ordinary streamed text "))
	ctx := context.Background()
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{})
	ctl.SetResponse(gateway.Response{Status: 200})
	ex.Response.Header.Set("Content-Type", "text/event-stream")
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if a := s.OnResponseFrame(ctx, ex, frame, false); !a.IsContinue() {
			b.Fatal(a)
		}
	}
}
