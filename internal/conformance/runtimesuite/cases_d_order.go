package runtimesuite

import (
	"strings"

	"github.com/abkit/abkit/internal/conformance"
)

// addDispatchOrderCases registers the cases of the walk's order and nameless contributions (D4, D5).
func addDispatchOrderCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		dcase("D4/order/priority-id-registration", []string{"D4", "D5"}, "the walk runs by priority, then plugin ID; nameless entries are skipped",
			"Registers extensions out of order and checks the call order (registration order among extensions of one ID is D4/order/registration).",
			d4OrderPriorityIdRegistration),
		dcase("D5/nameless-skipped", []string{"D5"}, "a contribution without a plugin ID is skipped: never called, no build error",
			"A nameless extension sits between two named ones at input.receive. The dispatcher must build, never call the nameless one (neither for a decision nor for the event), and walk the named ones.",
			d5NamelessSkipped),
		choice("D4.plugin-id", dcase("D4/order/registration", []string{"D4"}, "two extensions of one ID and priority run in registration order",
			"Two extensions both named a with priority 0 each replace the text: the first with \"first\", the second with \"second\". The second must see \"first\" and the host must get \"second\".",
			d4OrderRegistration)),
	} {
		r.Add(c)
	}
}

func d4OrderPriorityIdRegistration(t *conformance.T) {
	// Two extensions of one ID are choice D4.plugin-id's case
	// (D4/order/registration).
	calls, _ := runIntercept(t, "D4", "input.receive", `{"text":"x"}`, 1,
		ext{id: "z", priority: 5}, ext{id: "b", priority: -3}, ext{id: "a", priority: 5}, ext{id: "", priority: -100}, ext{id: "y", priority: 5})
	t.Diff("D4", "call order", []string{"b.intercept", "a.intercept", "y.intercept", "z.intercept"}, seq(calls, "intercept"))
}

func d5NamelessSkipped(t *conformance.T) {
	calls, run := runIntercept(t, "D5", "input.receive", `{"text":"x"}`, 1, ext{id: "a"}, ext{id: "", priority: 1, script: answer("block", "nameless", "")}, ext{id: "b", priority: 2})
	if run.GetBuildError() != "" {
		t.Errorf("D5", "a nameless contribution failed the build (%q); it must be skipped", run.GetBuildError())
	}
	t.Diff("D5", "calls", []string{"a.intercept", "b.intercept", "a.notify", "b.notify"}, sortNotify(seq(calls)))
	if rs := run.GetResults(); len(rs) == 1 && rs[0].GetBlocked() {
		t.Errorf("D5", "the nameless contribution took part in the walk: %v", rs[0])
	}
}

func d4OrderRegistration(t *conformance.T) {
	calls, run := runIntercept(t, "D4", "input.receive", `{"text":"x"}`, 1,
		ext{id: "a", script: answer("replace", "", `{"text":"first"}`)}, ext{id: "a", script: answer("replace", "", `{"text":"second"}`)})
	var seen []string
	for _, c := range calls {
		if c.Hook == "intercept" {
			seen = append(seen, strings.Join(strings.Fields(c.Payload), ""))
		}
	}
	t.Diff("D4", "payloads the two a's saw", []string{`{"text":"x"}`, `{"text":"first"}`}, seen)
	if g := run.GetResults(); len(g) != 1 || !strings.Contains(string(g[0].GetPayloadJson()), "second") {
		t.Errorf("D4", "result %v; want the later registration's replacement", g)
	}
}
