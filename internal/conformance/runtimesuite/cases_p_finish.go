package runtimesuite

import (
	"fmt"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addPipelineFinishCases registers the cases of OnFinish and per-exchange state: fresh contexts, outcomes, best effort, overruns, state (P26-P31).
func addPipelineFinishCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		pcase("P28/fresh-context/client-gone", []string{"P28"}, "the client goes away during OnResponse: OnFinish still gets a live context with a deadline",
			"The client context is cancelled from inside the last OnResponse. Every OnFinish must get a fresh context: not cancelled, with a deadline of at most the finish timeout (2 s by default).",
			p28FreshContextClientGone),
		pcase("P29/outcome/only-in-finish", []string{"P29"}, "the outcome is absent during request and response, present in finish with kind, status and denier",
			"Two exchanges, one allowed and one denied by p1. Hooks before finish must see no outcome; OnFinish sees allow/200, then deny/403 with denied_by p1.",
			p29OutcomeOnlyInFinish),
		pcase("P30/writes-during-finish", []string{"P30", "P17"}, "a body write during OnFinish is dropped with a warning",
			"The declared response-body writer writes during OnFinish. The client's body must stay as it was and the runtime must report a warning.",
			p30WritesDuringFinish),
		pcase("P30/finish-twice", []string{"P30", "P26"}, "finishing an exchange twice calls no finisher again and warns",
			"The runtime is asked to finish the exchange a second time; OnFinish must have run exactly once per plugin and the second finish must add a warning.",
			p30FinishTwice),
		pcase("P31/state/per-exchange", []string{"P31"}, "state set in OnRequest is read back in later hooks and never seen by the next exchange",
			"Each probe stores state in OnRequest; later hooks of the exchange must see it, and the next exchange's OnRequest must see none.",
			p31StatePerExchange),
		pcase("P28/finish-timeout/configured", []string{"P28"}, "a finish timeout of 600 ms is the deadline each OnFinish sees",
			"The scenario sets a finish timeout of 600 ms (not the 2 s default). Each OnFinish must see a live context whose deadline is at most 600 ms away and not far below it (more than 300 ms).",
			p28FinishTimeoutConfigured),
		choice("P30.overrun", pcase("P30/abandoned/reported", []string{"P30"}, "a finisher overrunning its deadline is abandoned and reported; the next one finishes",
			"With a 100 ms finish timeout the middle of three finishers sleeps 900 ms. The runtime must abandon it (the exchange result comes back well before it wakes), report it as a warning naming it, and still finish p0.",
			p30AbandonedReported)),
	} {
		r.Add(c)
	}
	for _, f := range []finishFault{{"panic", &abkitv1.ProbeReply{Panic: true}}, {"error", &abkitv1.ProbeReply{Error: "finish failed"}},
		{"slow", &abkitv1.ProbeReply{SleepNs: int64(900 * time.Millisecond)}}} {
		f := f
		r.Add(pcase("P30/best-effort/"+f.name, []string{"P30", "P27"}, "a finisher that "+f.name+"s does not keep the next (LIFO) one from finishing",
			"The middle of three finishers fails ("+f.name+"; the slow one overruns a 100 ms finish deadline). The runtime recovers or abandons it and still finishes the plugin before it, in LIFO order, and the exchange result comes back.",
			p30BestEffort(f)))
	}
}

func p28FreshContextClientGone(t *conformance.T) {
	pl := chain(2, "finish")
	pl[0].script = on("response", -1, &abkitv1.ProbeReply{CancelClient: true})
	calls, _ := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P28")
	n := 0
	for _, c := range calls {
		if c.Hook != "finish" {
			continue
		}
		n++
		if c.CtxDone {
			t.Errorf("P28", "%s: OnFinish context is cancelled (it derives from the request context)", c.Probe)
		}
		if c.Deadline <= 0 || c.Deadline > 2*time.Second+50*time.Millisecond {
			t.Errorf("P28", "%s: OnFinish deadline in %v; want a host-set deadline of at most 2s", c.Probe, c.Deadline)
		}
	}
	if n != 2 {
		t.Errorf("P26", "%d OnFinish calls; want 2", n)
	}
}

func p29OutcomeOnlyInFinish(t *conformance.T) {
	pl := chain(2, "finish")
	pl[1].script = func(c *Call) *abkitv1.ProbeReply {
		if c.Hook == "request" && c.Exchange == 1 {
			return reject(403, "no")
		}
		return nil
	}
	calls, _ := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`)), exchange(jsonUpstream(`{}`))}}.run(t, "P29")
	for _, c := range calls {
		switch {
		case c.Hook != "finish" && c.Outcome != nil:
			t.Errorf("P29", "%s.%s saw an outcome %v; it must be absent before finish", c.Probe, c.Hook, c.Outcome)
		case c.Hook == "finish" && c.Outcome == nil:
			t.Errorf("P29", "%s.finish saw no outcome", c.Probe)
		case c.Hook == "finish" && c.Exchange == 0 && (c.Outcome.GetKind() != "allow" || c.Outcome.GetStatus() != 200):
			t.Errorf("P29", "%s.finish of the allowed exchange saw %v; want allow 200", c.Probe, c.Outcome)
		case c.Hook == "finish" && c.Exchange == 1 && (c.Outcome.GetKind() != "deny" || c.Outcome.GetStatus() != 403 || c.Outcome.GetDeniedBy() != "p1"):
			t.Errorf("P29", "%s.finish of the denied exchange saw %v; want deny 403 by p1", c.Probe, c.Outcome)
		}
	}
}

func p30BestEffort(f finishFault) func(t *conformance.T) {
	return func(t *conformance.T) {
		pl := chain(3, "finish")
		pl[1].script = on("finish", -1, f.reply)
		calls, res := pipe{plugs: pl, finishTO: int64(100 * time.Millisecond), exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P30")
		t.Diff("P30", "finish calls", []string{"p2.finish", "p1.finish", "p0.finish"}, seq(calls, "finish"))
		if len(res.GetExchanges()) != 1 {
			t.Errorf("P30", "no exchange result")
		}
	}
}

func p30WritesDuringFinish(t *conformance.T) {
	pl := []plug{{name: "w", caps: &abkitv1.Capabilities{ReadsBody: true, WritesResponseBody: true}, behaviours: []string{"finish"},
		script: on("finish", -1, &abkitv1.ProbeReply{WriteResponseBody: true, Body: []byte("late")})}}
	_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{"a":1}`))}}.run(t, "P30")
	if e := res.GetExchanges(); len(e) == 1 {
		if string(e[0].GetBody()) != `{"a":1}` {
			t.Errorf("P30", "client body %q; a write during finish must not reach it", e[0].GetBody())
		}
		if len(e[0].GetWarnings()) == 0 {
			t.Errorf("P30", "no warning for the dropped write")
		}
	}
}

func p30FinishTwice(t *conformance.T) {
	ex := exchange(jsonUpstream(`{}`))
	ex.FinishTwice = true
	calls, res := pipe{plugs: chain(2, "finish"), exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P30")
	t.Diff("P26", "finish calls", []string{"p1.finish", "p0.finish"}, seq(calls, "finish"))
	if e := res.GetExchanges(); len(e) == 1 && len(e[0].GetWarnings()) == 0 {
		t.Errorf("P30", "no warning for the second finish")
	}
}

func p31StatePerExchange(t *conformance.T) {
	pl := chain(2, "finish")
	for i := range pl {
		pl[i].script = func(c *Call) *abkitv1.ProbeReply {
			if c.Hook == "request" {
				return &abkitv1.ProbeReply{SetState: true, State: fmt.Sprintf("ex%d", c.Exchange)}
			}
			return nil
		}
	}
	calls, _ := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`)), exchange(jsonUpstream(`{}`))}}.run(t, "P31")
	for _, c := range calls {
		want := fmt.Sprintf("ex%d", c.Exchange)
		switch {
		case c.Hook == "request" && c.State != nil:
			t.Errorf("P31", "%s.request of exchange %d saw state %q: state leaked between exchanges", c.Probe, c.Exchange, *c.State)
		case c.Hook != "request" && (c.State == nil || *c.State != want):
			t.Errorf("P31", "%s.%s of exchange %d saw state %v; want %q", c.Probe, c.Hook, c.Exchange, c.State, want)
		}
	}
}

func p28FinishTimeoutConfigured(t *conformance.T) {
	calls, _ := pipe{plugs: chain(2, "finish"), finishTO: int64(600 * time.Millisecond), exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P28")
	n := 0
	for _, c := range calls {
		if c.Hook != "finish" {
			continue
		}
		n++
		if c.CtxDone || c.Deadline <= 300*time.Millisecond || c.Deadline > 650*time.Millisecond {
			t.Errorf("P28", "%s: OnFinish context done=%v, deadline in %v; want a live context with the configured 600 ms deadline", c.Probe, c.CtxDone, c.Deadline)
		}
	}
	if n != 2 {
		t.Errorf("P26", "%d OnFinish calls; want 2", n)
	}
}

func p30AbandonedReported(t *conformance.T) {
	pl := chain(3, "finish")
	pl[1].script = on("finish", -1, &abkitv1.ProbeReply{SleepNs: int64(900 * time.Millisecond)})
	calls, res := pipe{plugs: pl, finishTO: int64(100 * time.Millisecond), exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P30")
	t.Diff("P30", "finish calls", []string{"p2.finish", "p1.finish", "p0.finish"}, seq(calls, "finish"))
	e := res.GetExchanges()
	if len(e) != 1 {
		t.Fatalf("P30", "%d exchange results; want 1", len(e))
	}
	found := false
	for _, w := range e[0].GetWarnings() {
		if w.GetPlugin() == "p1" || strings.Contains(w.GetMessage(), "p1") {
			found = true
		}
	}
	if !found {
		t.Errorf("P30", "no warning names the abandoned finisher p1: %v", e[0].GetWarnings())
	}
}

// finishFault is how a finisher of the P30 best-effort cases fails.
type finishFault struct {
	name  string
	reply *abkitv1.ProbeReply
}
