package ratelimiter_test

import (
	"context"
	"testing"

	"github.com/abkit/abkit/examples/plugins/ratelimiter"
	"github.com/abkit/abkit/sdk/gateway"
)

// BenchmarkReserveRelease takes and gives back a slot per iteration from
// parallel goroutines (concurrency mode).
func BenchmarkReserveRelease(b *testing.B) {
	p, err := ratelimiter.New(ratelimiter.Config{Limit: 1 << 20}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{})
			ctl.Enter(ratelimiter.Name, gateway.PhaseRequest, false, false)
			if a := p.OnRequest(ctx, ex); !a.IsContinue() {
				b.Fatal(a)
			}
			ctl.SetOutcome(gateway.Outcome{Kind: gateway.OutcomeAllow})
			ctl.Enter(ratelimiter.Name, gateway.PhaseFinish, false, false)
			if err := p.OnFinish(ctx, ex); err != nil {
				b.Fatal(err)
			}
		}
	})
}
