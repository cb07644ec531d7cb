package runtimekit_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/runtimekit"
)

// replies answers each probe call with reply(pc) and records the calls.
type replies struct {
	mu    sync.Mutex
	calls []*abkitv1.ProbeCall
	reply func(*abkitv1.ProbeCall) *abkitv1.ProbeReply
}

func (r *replies) Call(_ context.Context, pc *abkitv1.ProbeCall, _ ...grpc.CallOption) (*abkitv1.ProbeReply, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, pc)
	if r.reply == nil {
		return &abkitv1.ProbeReply{}, nil
	}
	return r.reply(pc), nil
}

func TestRuntimeCheckAndFamilies(t *testing.T) {
	p := func(context.Context, runtimekit.PipelineScenario) (*abkitv1.PipelineRun, error) { return nil, nil }
	h := func(context.Context, runtimekit.HookScenario) (*abkitv1.HookRun, error) { return nil, nil }
	if err := (runtimekit.Runtime{Pipeline: p}).Check(); err == nil || !strings.Contains(err.Error(), "Name") {
		t.Errorf("no name: %v", err)
	}
	if err := (runtimekit.Runtime{Name: "x"}).Check(); err == nil || !strings.Contains(err.Error(), "no family") {
		t.Errorf("no family: %v", err)
	}
	rt := runtimekit.Runtime{Name: "x", Pipeline: p, Hooks: h}
	if err := rt.Check(); err != nil {
		t.Error(err)
	}
	if got := rt.Families(); !slices.Equal(got, []string{"P", "H"}) {
		t.Errorf("families %v", got)
	}
}

// The hook's context state travels in the call, and the call is detached
// from it: a cancelled hook context is observed, not a failed call.
func TestCallObservesContext(t *testing.T) {
	rs := &replies{}
	probes := runtimekit.NewProbes(rs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	cancel()
	probes.Call(ctx, &abkitv1.ProbeCall{Probe: 1, Hook: "finish"})
	probes.Call(context.Background(), &abkitv1.ProbeCall{Probe: 1, Hook: "request"})
	if c := rs.calls[0]; !c.GetCtxDone() || c.GetDeadlineNs() <= 0 {
		t.Errorf("cancelled context with a deadline: ctx_done %v deadline %d", c.GetCtxDone(), c.GetDeadlineNs())
	}
	if c := rs.calls[1]; c.GetCtxDone() || c.GetDeadlineNs() != 0 {
		t.Errorf("live context without a deadline: ctx_done %v deadline %d", c.GetCtxDone(), c.GetDeadlineNs())
	}
}

func TestReplyActCancelsClientAndPanics(t *testing.T) {
	rs := &replies{reply: func(pc *abkitv1.ProbeCall) *abkitv1.ProbeReply {
		return &abkitv1.ProbeReply{CancelClient: pc.GetHook() == "request", Panic: pc.GetHook() == "frame", Error: "boom"}
	}}
	probes := runtimekit.NewProbes(rs)
	client, rctx := runtimekit.NewClient(context.Background(), &abkitv1.ExchangeSpec{})
	r := probes.Call(rctx, &abkitv1.ProbeCall{Probe: 2, Hook: "request"})
	r.Act(rctx)
	if rctx.Err() == nil {
		t.Error("cancel_client did not cancel the request context")
	}
	if r.Err() == nil || r.Err().Error() != "boom" {
		t.Errorf("Err %v", r.Err())
	}
	client.Cancel()
	defer func() {
		if recover() == nil {
			t.Error("a scripted panic did not panic")
		}
	}()
	probes.Call(context.Background(), &abkitv1.ProbeCall{Probe: 2, Hook: "frame"}).Act(context.Background())
}

func TestNewClientCancelled(t *testing.T) {
	_, rctx := runtimekit.NewClient(context.Background(), &abkitv1.ExchangeSpec{Cancelled: true})
	if rctx.Err() == nil {
		t.Error("a scenario client gone before the exchange: the request context is live")
	}
}

func TestUpstreamStream(t *testing.T) {
	up := runtimekit.NewUpstream(&abkitv1.UpstreamSpec{Status: 200, Chunks: [][]byte{[]byte("a"), []byte("b")}, EarlyEnd: true})
	if up.Stream == nil || up.Body != nil || up.Header == nil {
		t.Fatalf("streamed upstream: %+v", up)
	}
	ctx := context.Background()
	b, err := io.ReadAll(up.Stream.Reader(ctx))
	if string(b) != "ab" || !errors.Is(err, runtimekit.ErrEarlyEnd) {
		t.Errorf("read %q, %v; want ab and the early end", b, err)
	}
	up = runtimekit.NewUpstream(&abkitv1.UpstreamSpec{Chunks: [][]byte{[]byte("a")}})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := up.Stream.Next(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a read after the client went away: %v", err)
	}
	if _, err := up.Stream.Next(ctx); err != nil {
		t.Error(err)
	}
	if _, err := up.Stream.Next(ctx); err != io.EOF {
		t.Errorf("end: %v", err)
	}
	if up := runtimekit.NewUpstream(&abkitv1.UpstreamSpec{Status: 200, Error: "refused"}); up.Err == nil || up.Status != 0 {
		t.Errorf("an upstream that does not answer: %+v", up)
	}
}

func TestUpstreamServeHTTP(t *testing.T) {
	up := runtimekit.NewUpstream(&abkitv1.UpstreamSpec{Status: 201, Header: abkitv1.HeaderToProto(http.Header{"X-A": {"1"}}),
		Chunks: [][]byte{[]byte("data: 1\n\n"), []byte("data: 2\n\n")}})
	srv := httptest.NewServer(up)
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 || res.Header.Get("X-A") != "1" || string(b) != "data: 1\n\ndata: 2\n\n" {
		t.Errorf("got %d %v %q", res.StatusCode, res.Header, b)
	}
	broken := httptest.NewServer(runtimekit.NewUpstream(&abkitv1.UpstreamSpec{Error: "down"}))
	defer broken.Close()
	if res, err := http.Get(broken.URL); err == nil {
		res.Body.Close()
		t.Error("an upstream error answered")
	}
}

func TestRunLifecycle(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	sc := runtimekit.PipelineScenario{PipelineScenario: &abkitv1.PipelineScenario{Start: true, ReadyCalls: 3, Stop: true,
		StopTimeoutNs: int64(time.Minute), Exchanges: []*abkitv1.ExchangeSpec{{}, {}}}}
	run := sc.Run(context.Background(), runtimekit.Chain{
		Start: func(context.Context) error { note("start"); return nil },
		Ready: func(context.Context) error { note("ready"); return errors.New("not yet") },
		Stop: func(ctx context.Context) error {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("Stop without the scenario's deadline")
			}
			note("stop")
			return nil
		},
		Exchange: func(_ context.Context, idx uint32, _ *abkitv1.ExchangeSpec) *abkitv1.ExchangeRun {
			note("exchange")
			return &abkitv1.ExchangeRun{Frames: int32(idx)}
		},
	})
	if want := []string{"start", "ready", "ready", "ready", "exchange", "exchange", "stop"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if len(run.GetReadyErrors()) != 3 || run.GetReadyErrors()[2] != "not yet" || len(run.GetExchanges()) != 2 || run.GetExchanges()[1].GetFrames() != 1 {
		t.Errorf("run %v", run)
	}
	// A failed Start runs no exchange; nil steps succeed.
	run = sc.Run(context.Background(), runtimekit.Chain{Start: func(context.Context) error { return errors.New("init p0") },
		Exchange: func(context.Context, uint32, *abkitv1.ExchangeSpec) *abkitv1.ExchangeRun {
			t.Error("exchange after a failed start")
			return nil
		}})
	if run.GetStartError() != "init p0" || run.GetStopError() != "" || slices.ContainsFunc(run.GetReadyErrors(), func(s string) bool { return s != "" }) {
		t.Errorf("run %v", run)
	}
}

func TestHelpers(t *testing.T) {
	if !runtimekit.Has(&abkitv1.ProbeSpec{Behaviours: []string{"ready"}}, "shutdown") || runtimekit.Has(&abkitv1.ProbeSpec{}, "stream") {
		t.Error("Has: lifecycle behaviours come as a group")
	}
	for cfg, want := range map[string]bool{"": false, " null ": false, "{}": false, `{"x":1}`: true} {
		if got := runtimekit.HasConfig(&abkitv1.PipelineEntry{ConfigJson: []byte(cfg)}); got != want {
			t.Errorf("HasConfig(%q) = %v", cfg, got)
		}
	}
	if n := len(runtimekit.Errors(errors.Join(errors.New("a"), errors.New("b")))); n != 2 {
		t.Errorf("Errors of two joined: %d", n)
	}
	if runtimekit.Errors(nil) != nil || len(runtimekit.Errors(errors.New("a"))) != 1 {
		t.Error("Errors of nil or one")
	}
	if b := runtimekit.RequestBody(&abkitv1.HTTPRequest{HasBody: true}); b == nil || len(b) != 0 {
		t.Errorf("an empty body: %v", b)
	}
	if b := runtimekit.RequestBody(&abkitv1.HTTPRequest{Body: []byte("x")}); b != nil {
		t.Errorf("no body: %q", b)
	}
}

// The probe plugin reports what its hook sees and applies the reply.
func TestProbePlugin(t *testing.T) {
	rs := &replies{reply: func(pc *abkitv1.ProbeCall) *abkitv1.ProbeReply {
		if pc.GetHook() == "request" {
			return &abkitv1.ProbeReply{SetState: true, State: "s1", WriteRequestBody: true, Body: []byte("new"),
				Action: &abkitv1.Action{Kind: "reject", Status: 451, Reason: "no"}}
		}
		return &abkitv1.ProbeReply{}
	}}
	ps := &abkitv1.ProbeSpec{Probe: 7, Name: "w", Behaviours: []string{"finish"},
		Capabilities: &abkitv1.Capabilities{WritesRequestBody: true, ReadsBody: true}}
	p := runtimekit.NewProbePlugin(runtimekit.NewProbes(rs), ps).Plugin()
	if _, ok := p.(gateway.Finisher); !ok {
		t.Fatal("declared finish missing")
	}
	if _, ok := p.(gateway.StreamingResponder); ok {
		t.Fatal("undeclared stream present")
	}
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{})
	ctl.SetRequestBody([]byte("old"))
	ctl.Enter("w", gateway.PhaseRequest, true, false)
	runtimekit.SetExchange(ex, 3)
	a := p.OnRequest(context.Background(), ex)
	if a.IsContinue() || a.Status != 451 {
		t.Errorf("action %+v", a)
	}
	_ = p.OnResponse(context.Background(), ex)
	c := rs.calls[1]
	if c.GetExchange() != 3 || !c.GetHasState() || c.GetState() != "s1" || string(c.GetRequestBody()) != "new" || c.GetHasOutcome() {
		t.Errorf("the second call saw %v", c)
	}
}
