package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/abkit/abkit/sdk/gateway"
)

// nop is a plugin that continues everywhere; nopStream also streams.
type nop struct{ name string }

func (p nop) Name() string { return p.name }
func (p nop) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "does nothing"}
}
func (nop) OnRequest(context.Context, *gateway.Exchange) gateway.Action  { return gateway.Continue() }
func (nop) OnResponse(context.Context, *gateway.Exchange) gateway.Action { return gateway.Continue() }

type nopStream struct{ nop }

func (nopStream) OnResponseFrame(context.Context, *gateway.Exchange, []byte, bool) gateway.Action {
	return gateway.Continue()
}

func benchChain(n int, stream bool) *Chain {
	var spec Spec
	var facs []gateway.Factory
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		spec.Entries = append(spec.Entries, Entry{Plugin: name})
		facs = append(facs, gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) {
			if stream {
				return nopStream{nop{name}}, nil
			}
			return nop{name}, nil
		}})
	}
	c, err := Build(spec, facs, Options{})
	if err != nil {
		panic(err)
	}
	return c
}

var benchReq = Request{Request: gateway.Request{Method: "GET", URL: "http://svc/", Header: http.Header{}}}

// repeatStream yields chunk left times, then io.EOF.
type repeatStream struct {
	chunk []byte
	left  int
}

func (s *repeatStream) Next(context.Context) ([]byte, error) {
	if s.left == 0 {
		return nil, io.EOF
	}
	s.left--
	return s.chunk, nil
}

// discard is a ClientWriter that drops everything.
type discard struct{}

func (discard) WriteHeader(int, http.Header) {}
func (discard) Write(p []byte) (int, error)  { return len(p), nil }
func (discard) Flush()                       {}

// BenchmarkDispatch runs whole exchanges (OnRequest + OnResponse, tracing
// off) and reports ns per plugin per hook.
func BenchmarkDispatch(b *testing.B) {
	for _, n := range []int{1, 6, 24, 96} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			c := benchChain(n, false)
			up := Upstream{Status: 200, Header: http.Header{}, Body: []byte(`{}`)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				c.Run(ctx, benchReq, up, ExchangeOptions{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/plugin/hook")
		})
	}
}

// BenchmarkDispatchReuse is BenchmarkDispatch with the host reusing one
// exchange (Reset after Finish): allocs/op is the exchange state's, which
// must be 0 (TestResetAllocs holds it).
func BenchmarkDispatchReuse(b *testing.B) {
	for _, n := range []int{1, 6, 24, 96} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			c := benchChain(n, false)
			up := Upstream{Status: 200, Header: http.Header{}, Body: []byte(`{}`)}
			ctx := context.Background()
			x := c.NewExchange(benchReq, ExchangeOptions{})
			x.Finish()
			b.ReportAllocs()
			for b.Loop() {
				if !x.Reset(benchReq, ExchangeOptions{}) {
					b.Fatal("Reset refused")
				}
				if x.Request(ctx) {
					x.Respond(ctx, up)
				}
				x.Finish()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/plugin/hook")
		})
	}
}

// BenchmarkDispatchReuseInterleaved runs whole one-plugin exchanges in
// alternating batches of 100, new (NewExchange) and reused (Reset), so that
// the load of a shared machine falls on both alike. It reports each side's
// median and best batch in ns per exchange, and the ratio of the medians.
func BenchmarkDispatchReuseInterleaved(b *testing.B) {
	const batch = 100
	c := benchChain(1, false)
	up := Upstream{Status: 200, Header: http.Header{}, Body: []byte(`{}`)}
	ctx := context.Background()
	x := c.NewExchange(benchReq, ExchangeOptions{})
	x.Finish()
	var fresh, reused []float64
	for b.Loop() {
		t0 := time.Now()
		for range batch {
			e := c.NewExchange(benchReq, ExchangeOptions{})
			if e.Request(ctx) {
				e.Respond(ctx, up)
			}
			e.Finish()
		}
		t1 := time.Now()
		for range batch {
			if !x.Reset(benchReq, ExchangeOptions{}) {
				b.Fatal("Reset refused")
			}
			if x.Request(ctx) {
				x.Respond(ctx, up)
			}
			x.Finish()
		}
		t2 := time.Now()
		fresh = append(fresh, float64(t1.Sub(t0).Nanoseconds())/batch)
		reused = append(reused, float64(t2.Sub(t1).Nanoseconds())/batch)
	}
	slices.Sort(fresh)
	slices.Sort(reused)
	b.ReportMetric(fresh[len(fresh)/2], "new-ns/exchange")
	b.ReportMetric(reused[len(reused)/2], "reused-ns/exchange")
	b.ReportMetric(fresh[0], "new-best-ns")
	b.ReportMetric(reused[0], "reused-best-ns")
	b.ReportMetric(reused[len(reused)/2]/fresh[len(fresh)/2], "reused/new")
}

// BenchmarkDispatchHooks isolates the per-call cost: it drives only the
// request stage repeatedly on one exchange, so exchange set-up is excluded.
func BenchmarkDispatchHooks(b *testing.B) {
	for _, n := range []int{1, 6, 24, 96} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			c := benchChain(n, false)
			x := c.NewExchange(benchReq, ExchangeOptions{})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				x.stage = stNew
				x.Request(ctx)
				x.responseFrom(n - 1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/plugin/hook")
		})
	}
}

// BenchmarkFrame streams one frame per chunk to 6 streaming plugins
// (Continue, tracing off) and reports ns and allocations per frame.
func BenchmarkFrame(b *testing.B) {
	c := benchChain(6, true)
	st := &repeatStream{chunk: []byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")}
	b.ReportAllocs()
	b.ResetTimer()
	st.left = b.N
	res := c.Run(context.Background(), benchReq, Upstream{Status: 200, Header: sseHeader(), Stream: st}, ExchangeOptions{Client: discard{}})
	b.StopTimer()
	if res.Frames != b.N {
		b.Fatalf("%d frames, want %d", res.Frames, b.N)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/frame")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/6, "ns/plugin/frame")
}
