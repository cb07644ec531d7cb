package guardrail_test

import (
	"context"
	"testing"

	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/sdk/gateway"
)

// BenchmarkFrame checks one chat-completions chunk per iteration against
// a phrase and a pattern (regexp), carrying text across frames as in a
// long stream; phrases is the same with two phrases only.
func BenchmarkFrame(b *testing.B) {
	b.Run("phrase+pattern", func(b *testing.B) { benchFrame(b, testConfig) })
	b.Run("phrases", func(b *testing.B) { benchFrame(b, `{"phrases":["Drop Table","rm -rf /"]}`) })
}

func benchFrame(b *testing.B, config string) {
	p, err := guardrail.Factory().New([]byte(config))
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
