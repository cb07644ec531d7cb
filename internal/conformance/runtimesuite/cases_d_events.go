package runtimesuite

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addDispatchEventCases registers the cases of events after the walk (D20).
func addDispatchEventCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		dcase("D20/events/slot-owners", []string{"D20", "D19"}, "slot owners get the events of the points their slot observes, once each",
			"The owner of the context slot (no chain points) and a chain member at context.prepare each get the final payload once; the owner of session_policy gets session.start, an event-only point its slot observes, once; an extension at no point and owning no slot gets nothing.",
			d20EventsSlotOwners),
		dcase("D20/events/drops-warned-once", []string{"D20", "D15"}, "a full event queue drops events without blocking, with exactly one warning",
			"Dispatches 1,500 concurrent operations at the event-only point session.save to an observer whose first event takes 300 ms. A bounded queue fills: each event is either delivered or dropped, and if any was dropped there is exactly one drop warning. A runtime whose queue holds all 1,500 passes with no warning (the drop path is then not exercised, and the case logs it); the spec does not fix the queue size, so a larger queue is not a failure.",
			d20EventsDropsWarnedOnce),
		dcase("D20/events", []string{"D20"}, "after a walk, blocked or not, each member gets the final payload once; none after a required failure",
			"Checks the notify calls after a completed walk, after a block, and after a required failure.",
			d20Events),
		choice("D20.notify", dcase("D20/events/notify-error-warned-once", []string{"D20", "D15"}, "an observer whose Notify fails gets one event_failure warning, not one per event",
			"A member at input.receive fails every Notify; three dispatches complete. The dispatcher must still answer every dispatch and emit exactly one event_failure warning naming the member.",
			d20EventsNotifyErrorWarnedOnce)),
	} {
		r.Add(c)
	}
}

func d20EventsSlotOwners(t *conformance.T) {
	calls, _ := runIntercept(t, "D20", "context.prepare", `{"messages":[]}`, 1,
		ext{id: "owner", slots: []string{"context"}, points: []string{}}, ext{id: "member"}, ext{id: "bystander", points: []string{"input.receive"}})
	t.Diff("D20", "events at context.prepare", []string{"member.notify", "owner.notify"}, sortNotify(seq(calls, "notify")))
	for _, c := range calls {
		if c.Hook == "notify" {
			seesHost(t, "D20", "context.prepare", `{"messages":[]}`, c.Payload, c.Probe+"'s event")
		}
	}
	calls, _ = runIntercept(t, "D20", "session.start", `{"sessionPath":"/s","phase":"start"}`, 1,
		ext{id: "policy", slots: []string{"session_policy"}, points: []string{}}, ext{id: "bystander", points: []string{"input.receive"}})
	t.Diff("D20", "events at session.start", []string{"policy.notify"}, seq(calls))
}

func d20EventsDropsWarnedOnce(t *conformance.T) {
	const n = 1500
	var first sync.Once
	slow := func(c *Call) *abkitv1.ProbeReply {
		r := &abkitv1.ProbeReply{}
		if c.Hook == "notify" {
			first.Do(func() { r.SleepNs = int64(300 * time.Millisecond) })
		}
		return r
	}
	calls, run := runIntercept(t, "D20", "session.save", `{"sessionPath":"/s","phase":"save"}`, n, ext{id: "obs", script: slow})
	delivered := len(seq(calls, "notify"))
	drops := 0
	for _, w := range run.GetWarnings() {
		if strings.HasPrefix(w.GetKind(), "event") {
			drops++
		}
	}
	for _, r := range run.GetResults() {
		if r.GetError() != "" || r.GetFailure() != nil {
			t.Fatalf("D20", "an event-only dispatch failed: %v", r)
		}
	}
	t.Logf("%d of %d events delivered, %d drop warnings", delivered, n, drops)
	switch {
	case delivered > n:
		t.Errorf("D20", "%d events delivered for %d dispatches: an event went out twice", delivered, n)
	case delivered < n && drops != 1:
		t.Errorf("D15", "%d of %d events dropped with %d drop warnings; want exactly one warning", n-delivered, n, drops)
	case delivered == n && drops != 0:
		t.Errorf("D20", "every event was delivered, yet %d drop warnings", drops)
	case delivered == n:
		t.Logf("the runtime's queue held all %d events; the drop path was not exercised", n)
	}
}

func d20Events(t *conformance.T) {
	calls, _ := runIntercept(t, "D20", "input.receive", `{"text":"x"}`, 1, ext{id: "a"}, ext{id: "b", priority: 1, script: answer("block", "no", "")})
	n := seq(calls, "notify")
	if len(n) != 2 || !slices.Contains(n, "a.notify") || !slices.Contains(n, "b.notify") {
		t.Errorf("D20", "notify calls %v; want one each for a and b", n)
	}
	calls, _ = runIntercept(t, "D20", "input.receive", `{"text":"x"}`, 1, ext{id: "a", required: true, script: fail("x")})
	if n := seq(calls, "notify"); len(n) != 0 {
		t.Errorf("D20", "events after a required failure: %v", n)
	}
}

func d20EventsNotifyErrorWarnedOnce(t *conformance.T) {
	_, run := runIntercept(t, "D20", "input.receive", `{"text":"x"}`, 3, ext{id: "deaf", script: func(c *Call) *abkitv1.ProbeReply {
		if c.Hook == "notify" {
			return &abkitv1.ProbeReply{Error: "cannot hear"}
		}
		return nil
	}})
	if len(run.GetResults()) != 3 {
		t.Fatalf("D20", "%d results; want 3", len(run.GetResults()))
	}
	var n int
	for _, w := range run.GetWarnings() {
		if w.GetKind() == "event_failure" && w.GetExtension() == "deaf" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("D20", "%d event_failure warnings for deaf; want exactly 1: %v", n, run.GetWarnings())
	}
}
