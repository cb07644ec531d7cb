package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/probe"
	"github.com/abkit/abkit/sdk/gateway"
)

// finishTimeout is the deadline of OnFinish in the finish cases.
const finishTimeout = time.Second

// addPipelineFinishCases registers the cases of OnFinish: its deadline, and
// exchanges that failed or that it never saw (P26, P28-P30).
func addPipelineFinishCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "P28/finish/within-deadline", Rules: []string{"P28", "P30"},
			Summary: "OnFinish returns within its 1 s deadline after allowed and streamed exchanges",
			Explain: `Drives the standard exchanges with a 1 s finish deadline. OnFinish gets
a fresh context carrying it; the host abandons a call still running
100 ms after it. OnFinish must not panic or write bodies.
A failure means OnFinish blocks (a channel send, an unbounded flush, a
network call without ctx) or panics. Fix: honour ctx.Done(), hand slow
work to a bounded background queue.`,
			Applies: needFinish,
			Run:     p28FinishWithinDeadline,
		},
		{
			ID: "P26/finish/nothing-reserved", Rules: []string{"P26", "P28", "P30"},
			Summary: "OnFinish copes with exchanges that failed upstream or were cancelled",
			Explain: `Drives exchanges that end badly after the plugin's OnRequest ran: the
upstream does not answer (error outcome, 502), and the stream ends
early. OnFinish runs for each (P26) and must return within its deadline
without panicking, even though the usual response-side state was never
built ("nothing was reserved").
A failure means OnFinish assumes the response hooks ran. Fix: look up
your per-exchange state and do nothing when it is missing.`,
			Applies: needFinish,
			Run:     p26FinishNothingReserved,
		},
		{
			ID: "P26/finish/unseen-request", Rules: []string{"P26", "P29", "P30"},
			Summary: "OnFinish tolerates an exchange whose request it never saw",
			Explain: `Calls OnFinish on a fresh instance for an exchange it was never shown
(no OnRequest), with a deny outcome, as a restarted plugin process or a
host recovering from a crash may. It must return within its 1 s deadline
without panicking.
A failure means OnFinish dereferences per-exchange state it expects
OnRequest to have set. Fix: treat missing state as "nothing to do".`,
			Applies: needFinish,
			Run:     p26FinishUnseenRequest,
		},
	} {
		r.Add(c)
	}
}

func p28FinishWithinDeadline(t *T) {
	rg := newRig(t, pipeline.Options{FinishTimeout: finishTimeout})
	for _, sc := range numbered(append(jsonScenarios(), streamScenarios()...)) {
		checkFinish(t, rg, rg.run(sc, nil, false))
	}
}

func p26FinishNothingReserved(t *T) {
	rg := newRig(t, pipeline.Options{FinishTimeout: finishTimeout})
	// An upstream that never answered.
	ctx := t.Context()
	h := http.Header{"X-Client-Id": {"conformance"}}
	rec := rg.t.rec
	ex := rg.chain.NewExchange(pipeline.Request{Request: gateway.Request{Method: "GET", URL: "/unreachable", Header: h}}, pipeline.ExchangeOptions{Trace: rec})
	n := len(rec.Events())
	if ex.Request(ctx) {
		ex.Respond(ctx, pipeline.Upstream{Err: errors.New("conformance: upstream refused the connection")})
	}
	res := ex.Finish()
	checkFinish(t, rg, outcome{at: "exchange 1 of 2 (upstream-failed, no answer from the upstream)", res: res, events: rec.Events()[n:]})
	s := streamScenarios()[0]
	s.name, s.events, s.early, s.pos, s.of = "early-end", chatEvents("Hel"), true, 2, 2
	checkFinish(t, rg, rg.run(s, nil, false))
}

func p26FinishUnseenRequest(t *T) {
	f := t.Factory()
	cfg, err := WorkingConfig(f)
	if err != nil {
		t.Fatalf("P26", "no instance could be made: %v", err)
	}
	p, err := probe.New(f, cfg)
	if err != nil {
		t.Fatalf("P26", "no instance could be made: %v", err)
	}
	fin, ok := p.(gateway.Finisher)
	if !ok {
		t.Fatalf("P26", "the instance does not implement OnFinish although the descriptor lists the finish behaviour")
	}
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{Method: "POST", URL: "/never-seen", Header: http.Header{}})
	ctl.SetResponse(gateway.Response{Status: 403})
	ctl.SetOutcome(gateway.Outcome{Kind: gateway.OutcomeDeny, Status: 403, DeniedBy: "some-other-plugin", Reason: "conformance", Duration: time.Millisecond})
	caps := p.Capabilities().Normalize()
	ctl.Enter(p.Name(), gateway.PhaseFinish, caps.WritesRequestBody, caps.WritesResponseBody)
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	done := make(chan error, 1)
	overran := errors.New("overran")
	go func() {
		defer func() {
			if r := recover(); r != nil {
				// Across the boundary the deadline is the gRPC
				// call's: the adapter panics with a deadline error.
				if e, ok := r.(error); ok && errors.Is(e, pluginhost.ErrDeadline) {
					done <- overran
					return
				}
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- fin.OnFinish(ctx, ex)
	}()
	select {
	case err := <-done:
		if err == overran {
			t.Errorf("P28", "deadline overrun: OnFinish of an unseen exchange did not return within its %v deadline (ctx.Done() was ignored)", finishTimeout)
			return
		}
		if err != nil && strings.HasPrefix(err.Error(), "panic") {
			t.Errorf("P30", "OnFinish of an unseen exchange panicked: %v", err)
		}
		t.Logf("OnFinish of an unseen exchange returned %v", err)
	case <-time.After(finishTimeout + 100*time.Millisecond):
		t.Errorf("P28", "deadline overrun: OnFinish of an unseen exchange did not return within its %v deadline", finishTimeout)
	case <-t.Context().Done():
	}
}

// checkFinish fails the plugin's OnFinish calls in o that overran their
// deadline, panicked or wrote a body.
func checkFinish(t *T, rg *rig, o outcome) {
	for _, e := range o.events {
		if e.Plugin != rg.name || e.Hook != "on_finish" {
			continue
		}
		switch {
		case strings.Contains(e.Error, pipeline.ErrAbandoned.Error()),
			// Across the process boundary the finish deadline is the
			// gRPC call's, which fires before the runtime abandons the
			// call: the adapter reports it as a failed call (a panic
			// to the runtime), which is an overrun, not a P30 panic.
			strings.Contains(e.Error, "on_finish: "+pluginhost.ErrDeadline.Error()):
			// One is enough: each more would cost another deadline.
			t.FatalAt("P28", o.at+", on_finish", "deadline overrun: OnFinish did not return within its %v deadline (ctx.Done() was ignored); it was abandoned", finishTimeout)
		case strings.Contains(e.Error, "panic"):
			t.ErrorAt("P30", o.at+", on_finish", "%s", callProblem(e.Error))
		}
	}
	for _, w := range o.res.Warnings {
		if w.Rule == "P30" && w.Plugin == rg.name && strings.Contains(w.Msg, "body write") {
			t.ErrorAt("P30", o.at+", on_finish", "%s", w.Msg)
		}
	}
}

// needFinish applies a finish case: a chain can be built and the plugin
// implements OnFinish.
func needFinish(d *Reported) string {
	return all(pipelineReady, behaviour(gateway.BehaviourFinish))(d)
}
