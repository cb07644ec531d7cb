package runtimekit_test

import (
	"context"
	"fmt"
	"io"

	"google.golang.org/grpc"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/runtimekit"
)

// scripted stands in for the runner's probe server: probe 1 rejects the
// request of exchange 1 and lets the others through.
type scripted struct{}

func (scripted) Call(_ context.Context, pc *abkitv1.ProbeCall, _ ...grpc.CallOption) (*abkitv1.ProbeReply, error) {
	if pc.GetHook() == "request" && pc.GetExchange() == 1 {
		return &abkitv1.ProbeReply{Action: &abkitv1.Action{Kind: "reject", Status: 403, Reason: "admin only"}}, nil
	}
	return &abkitv1.ProbeReply{}, nil
}

// A pipeline runtime's adapter in miniature: the runtime under test is the
// Exchange function (one plugin hook, then the upstream); the kit plays the
// client and the upstream and fills the run. Under `conformance run
// --runtime` the probes and the scenario come from the runner, through
// runtimekit.Serve.
func Example() {
	sc := runtimekit.PipelineScenario{Probes: runtimekit.NewProbes(scripted{}), PipelineScenario: &abkitv1.PipelineScenario{
		Plugins: []*abkitv1.ProbeSpec{{Probe: 1, Name: "guard"}},
		Exchanges: []*abkitv1.ExchangeSpec{
			{Request: &abkitv1.HTTPRequest{Method: "GET", Url: "/"},
				Upstream: &abkitv1.UpstreamSpec{Status: 200, Chunks: [][]byte{[]byte("hel"), []byte("lo")}}},
			{Request: &abkitv1.HTTPRequest{Method: "GET", Url: "/admin"},
				Upstream: &abkitv1.UpstreamSpec{Status: 200, Body: []byte("secret")}},
		},
	}}
	run := sc.Run(context.Background(), runtimekit.Chain{
		Exchange: func(ctx context.Context, idx uint32, es *runtimekit.ExchangeSpec) *runtimekit.ExchangeRun {
			client, rctx := runtimekit.NewClient(ctx, es)
			defer client.Cancel()
			out := &runtimekit.ExchangeRun{}
			r := sc.Probes.Call(rctx, &runtimekit.ProbeCall{Probe: 1, Hook: "request", Exchange: idx})
			r.Act(rctx) // cancel the client, sleep or panic, if scripted
			if status, reason, ok := r.Rejects(); ok {
				client.WriteHeader(status)
				_, _ = io.WriteString(client, reason)
				out.Outcome = runtimekit.Outcome("deny", status, "guard", reason, 0)
			} else {
				up := runtimekit.NewUpstream(es.GetUpstream())
				client.WriteHeader(up.Status)
				if up.Stream != nil {
					_, _ = io.Copy(client, up.Stream.Reader(rctx))
				} else {
					_, _ = client.Write(up.Body)
				}
				out.Outcome = runtimekit.Outcome("allow", up.Status, "", "", 0)
			}
			client.Fill(out)
			return out
		},
	})
	for _, x := range run.GetExchanges() {
		fmt.Printf("%s %d %q\n", x.GetOutcome().GetKind(), x.GetStatus(), x.GetBody())
	}
	// Output:
	// allow 200 "hello"
	// deny 403 "admin only"
}
