package runtimesuite

import (
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addDHResultCases read the dispatcher's and the bus's answers in full:
// the strategy block, registration order, the fail-open error list, panics
// under fail-open, the order of part and tool chains.
func addDHResultCases(r *conformance.Registry) {
	addD := func(id string, rules []string, summary, explain string, run func(t *conformance.T)) {
		r.Add(&conformance.Case{ID: id, Rules: rules, Summary: summary, Explain: explain, Applies: needFam("D"), Run: run})
	}
	// addDC adds a check of choice point cp (its reference alternative).
	addDC := func(cp, id string, rules []string, summary, explain string, run func(t *conformance.T)) {
		r.Add(&conformance.Case{ID: id, Rules: rules, Summary: summary, Explain: explain, Applies: needFam("D"), Run: run, Choice: cp})
	}
	addH := func(id string, rules []string, summary, explain string, run func(t *conformance.T)) {
		r.Add(&conformance.Case{ID: id, Rules: rules, Summary: summary, Explain: explain, Applies: needFam("H"), Run: run})
	}
	addD("D19/strategy/owner-block", []string{"D19", "D7"}, "a slot owner's block is reported as Blocked by the owner in phase strategy, with its reason",
		"After a continue walk the owner of the context slot blocks with a reason. The result must be blocked, blocked_by the owner, block_phase \"strategy\", carrying the reason; a walk member's block is phase \"walk\".",
		func(t *conformance.T) {
			_, run := runIntercept(t, "D19", "context.prepare", `{"messages":[]}`, 1,
				ext{id: "owner", slots: []string{"context"}, points: []string{}, script: answer("block", "owner says no", "")}, ext{id: "member", priority: 5})
			g := run.GetResults()
			named := t.Alternative("D7.blocked-by") == "named"
			if len(g) != 1 || !g[0].GetBlocked() || g[0].GetReason() != "owner says no" {
				t.Errorf("D19", "owner block: %v; want blocked with reason %q", g, "owner says no")
			} else if named && (g[0].GetBlockedBy() != "owner" || g[0].GetBlockPhase() != "strategy") {
				t.ChoiceErrorf("D7.blocked-by", "D19", "owner block: %v; want blocked by owner in phase strategy", g)
			}
			_, run = runIntercept(t, "D7", "context.prepare", `{"messages":[]}`, 1,
				ext{id: "owner", slots: []string{"context"}, points: []string{}}, ext{id: "member", priority: 5, script: answer("block", "member says no", "")})
			g = run.GetResults()
			if len(g) != 1 || !g[0].GetBlocked() || g[0].GetReason() != "member says no" {
				t.Errorf("D7", "walk block: %v; want blocked with reason %q", g, "member says no")
			} else if named && (g[0].GetBlockedBy() != "member" || g[0].GetBlockPhase() != "walk") {
				t.ChoiceErrorf("D7.blocked-by", "D7", "walk block: %v; want blocked by member in phase walk", g)
			}
		})
	addDC("D19.specific-slots", "D19/strategy/specific-rules-last", []string{"D19"}, "a tool:<name> owner rules after the walk, only for its tool",
		"At tool.before for tool t, the owner of tool:t (registered first) and a walk member both replace: the owner rules after the walk, so its replacement is the result. At tool.before for another tool the tool:t owner is not asked.",
		func(t *conformance.T) {
			calls, run := runIntercept(t, "D19", "tool.before", `{"name":"t","arguments":"{}"}`, 1,
				ext{id: "towner", slots: []string{"tool:t"}, points: []string{}, script: answer("replace", "", `{"name":"t","arguments":"{\"by\":\"owner\"}"}`)},
				ext{id: "member", priority: 5, script: answer("replace", "", `{"name":"t","arguments":"{\"by\":\"member\"}"}`)})
			t.Diff("D19", "call order", []string{"member.intercept", "towner.intercept"}, seq(calls, "intercept"))
			if g := run.GetResults(); len(g) != 1 || !strings.Contains(string(g[0].GetPayloadJson()), `owner`) {
				t.Errorf("D19", "the tool slot owner's replacement must win: %v", g)
			}
			calls, _ = runIntercept(t, "D19", "tool.before", `{"name":"other","arguments":"{}"}`, 1,
				ext{id: "towner", slots: []string{"tool:t"}, points: []string{}}, ext{id: "member", priority: 5})
			t.Diff("D19", "calls for another tool (the tool:t owner does not rule)", []string{"member.intercept"}, seq(calls, "intercept"))
		})
	addDC("D4.plugin-id", "D4/order/registration", []string{"D4"}, "two extensions of one ID and priority run in registration order",
		"Two extensions both named a with priority 0 each replace the text: the first with \"first\", the second with \"second\". The second must see \"first\" and the host must get \"second\".",
		func(t *conformance.T) {
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
		})

	addDC("D19.specific-slots", "D19/strategy/provider-slot-rules-last", []string{"D19"}, "a provider:<name>/<model> owner rules after the generic provider_request owner",
		"At provider.request for provider openai/gpt-4o, the owner of provider:openai/gpt-4o (registered first) and the owner of provider_request both replace. Generic slots rule before provider: slots, so the specific owner is asked last and its replacement is the result.",
		func(t *conformance.T) {
			by := func(who string) string {
				return `{"request":{"messages":[{"role":"system","content":"` + who + `"}],"tools":[],"maxTokens":0}}`
			}
			calls, run := runInterceptFor(t, "D19", "provider.request", `{"request":{"messages":[],"tools":[],"maxTokens":0}}`, "openai/gpt-4o", 1,
				ext{id: "specific", slots: []string{"provider:openai/gpt-4o"}, points: []string{}, script: answer("replace", "", by("specific"))},
				ext{id: "generic", slots: []string{"provider_request"}, points: []string{}, script: answer("replace", "", by("generic"))})
			t.Diff("D19", "strategy order", []string{"generic.intercept", "specific.intercept"}, seq(calls, "intercept"))
			if g := run.GetResults(); len(g) != 1 || !strings.Contains(string(g[0].GetPayloadJson()), `"specific"`) {
				t.Errorf("D19", "the provider slot owner's replacement must win: %v", g)
			}
		})
	addD("D13/optional/warned-in-result", []string{"D13", "D15"}, "an optional extension's failure is skipped and warned about, in the dispatch's result and to the host",
		"An optional extension errors at input.receive before a continuing one. The dispatch succeeds with the host's payload; its result lists one warning naming the failed extension, and the dispatcher emitted one warning of kind error for it.",
		func(t *conformance.T) {
			calls, run := runIntercept(t, "D13", "input.receive", `{ "text": "hi" }`, 1, ext{id: "flaky", script: fail("down")}, ext{id: "next", priority: 1})
			t.Diff("D13", "calls", []string{"flaky.intercept", "next.intercept"}, seq(calls, "intercept"))
			g := run.GetResults()
			if len(g) != 1 || g[0].GetError() != "" || g[0].GetFailure() != nil {
				t.Errorf("D13", "result %v; want success: an optional extension's failure is skipped", g)
			} else if t.Alternative("D13.warnings") == "in-result" && (len(g[0].GetWarnings()) != 1 || !strings.Contains(g[0].GetWarnings()[0], "flaky")) {
				t.ChoiceErrorf("D13.warnings", "D13", "result warnings %v; want one naming flaky", g[0].GetWarnings())
			}
			var n int
			for _, w := range run.GetWarnings() {
				if w.GetExtension() == "flaky" && w.GetKind() == "error" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("D15", "%d error warnings for flaky; want 1: %v", n, run.GetWarnings())
			}
		})
	addDC("D20.notify", "D20/events/notify-error-warned-once", []string{"D20", "D15"}, "an observer whose Notify fails gets one event_failure warning, not one per event",
		"A member at input.receive fails every Notify; three dispatches complete. The dispatcher must still answer every dispatch and emit exactly one event_failure warning naming the member.",
		func(t *conformance.T) {
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
		})

	sub := `{"model":"m"}`
	addH("H2/fail-open/errors-read", []string{"H2", "H3"}, "fail-open failures (an error, a panic) are each recorded with hook and kind; the chain goes on with the value from before",
		"Three submit hooks: a (fail-open) changes the model and errors, b (fail-open) changes the model and panics, c passes. c must see model m; the output is model m; the error list holds a (error, with its message) then b (panic); there is no failure.",
		func(t *conformance.T) {
			calls, run := runHooks(t, "H2", "submit", "", sub, hspec("a", 0, "fail-open", "submit"), hspec("b", 1, "fail-open", "submit"), hspec("c", 2, "fail-closed", "submit"))(
				func(*Call) *abkitv1.ProbeReply {
					return &abkitv1.ProbeReply{ValueJson: []byte(`{"model":"changed-by-a"}`), Error: "a broke"}
				},
				func(*Call) *abkitv1.ProbeReply {
					return &abkitv1.ProbeReply{ValueJson: []byte(`{"model":"changed-by-b"}`), Panic: true}
				})
			if len(calls) != 3 || run.GetFailure() != nil {
				t.Errorf("H2", "calls %v, failure %v; want c called and no failure", calls, run.GetFailure())
			}
			// The value after failing hooks follows choice H2.rollback.
			want := `"m"`
			if t.Alternative("H2.rollback") == "keep" {
				want = `"changed-by-b"`
			}
			if len(calls) == 3 && (!strings.Contains(calls[2].Value, want) || !strings.Contains(string(run.GetOutputJson()), want)) {
				t.ChoiceErrorf("H2.rollback", "H2", "c saw %s, output %s; want model %s (%s)", calls[2].Value, run.GetOutputJson(), want, t.Alternative("H2.rollback"))
			}
			errs := run.GetErrors()
			if len(errs) != 2 || errs[0].GetHook() != "a" || errs[0].GetKind() != "error" || !strings.Contains(errs[0].GetMessage(), "a broke") ||
				errs[1].GetHook() != "b" || errs[1].GetKind() != "panic" {
				t.Errorf("H2", "recorded errors %v; want a (error, \"a broke\") then b (panic)", errs)
			}
		})
	part := `{"index":0,"type":"message","data":{"x":1}}`
	for _, kind := range []string{"request_part", "response_part"} {
		kind := kind
		addH("H1/order/"+kind, []string{"H1", "H2"}, "the "+kind+" chain runs by order, then ID, then registration; a fail-open error is recorded",
			"Registers "+kind+" hooks out of order (one failing under fail-open) and checks the call order, the error list and that the output is the value from before the failing hook.",
			func(t *conformance.T) {
				calls, run := runHooks(t, "H1", kind, "", part, hspec("z", 1, "fail-open", kind), hspec("b", 0, "fail-open", kind), hspec("a", 1, "fail-open", kind))(
					nil, nil, func(*Call) *abkitv1.ProbeReply {
						return &abkitv1.ProbeReply{ValueJson: []byte(`{"index":0,"type":"message","data":{"x":2}}`), Error: "a broke"}
					})
				t.Diff("H1", "order", []string{"b.part", "a.part", "z.part"}, seq(calls))
				if errs := run.GetErrors(); len(errs) != 1 || errs[0].GetHook() != "a" {
					t.Errorf("H2", "recorded errors %v; want one, from a", errs)
				}
				if run.GetFailure() != nil {
					t.Errorf("H2", "failure %v; want none (a is fail-open)", run.GetFailure())
				}
				want := `"x":1`
				if t.Alternative("H2.rollback") == "keep" {
					want = `"x":2`
				}
				if out := strings.Join(strings.Fields(string(run.GetOutputJson())), ""); !strings.Contains(out, want) {
					t.ChoiceErrorf("H2.rollback", "H2", "output %s; want %s (%s)", run.GetOutputJson(), want, t.Alternative("H2.rollback"))
				}
			})
	}
	addH("H1/order/tool", []string{"H1", "H5"}, "tool reactors run by order, then ID, then registration",
		"Registers tool reactors out of order and checks the call order.",
		func(t *conformance.T) {
			ev := `{"phase":"start","call_id":"c","name":"t"}`
			calls, _ := runHooks(t, "H1", "tool", "", ev, hspec("z", 1, "", "tool"), hspec("b", 0, "", "tool"), hspec("a", 1, "", "tool"))()
			t.Diff("H1", "order", []string{"b.tool", "a.tool", "z.tool"}, seq(calls))
		})
}
