package runtimesuite

import (
	"strings"

	"github.com/abkit/abkit/internal/conformance"
)

// addDispatchSlotCases registers the cases of slots and their owners' strategy (D17-D19).
func addDispatchSlotCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		dcase("D18/single-owner", []string{"D18", "D17"}, "a second owner of a slot, or an invalid slot name, fails the build naming the claimants",
			"Two extensions claim the permission slot; then one claims a slot that does not exist. Both builds must fail.",
			d18SingleOwner),
		dcase("D19/strategy", []string{"D19", "D12"}, "the slot owner rules last; a walk block skips it; an owner failure is fatal",
			"The owner of the context slot replaces after a continue walk (its replacement wins); with a blocking walk member it is not called; an owner (not marked required) that errors fails the operation.",
			d19Strategy),
		dcase("D19/strategy/owner-block", []string{"D19", "D7"}, "a slot owner's block is reported as Blocked by the owner in phase strategy, with its reason",
			"After a continue walk the owner of the context slot blocks with a reason. The result must be blocked, blocked_by the owner, block_phase \"strategy\", carrying the reason; a walk member's block is phase \"walk\".",
			d19StrategyOwnerBlock),
		choice("D19.specific-slots", dcase("D19/strategy/specific-rules-last", []string{"D19"}, "a tool:<name> owner rules after the walk, only for its tool",
			"At tool.before for tool t, the owner of tool:t (registered first) and a walk member both replace: the owner rules after the walk, so its replacement is the result. At tool.before for another tool the tool:t owner is not asked.",
			d19StrategySpecificRulesLast)),
		choice("D19.specific-slots", dcase("D19/strategy/provider-slot-rules-last", []string{"D19"}, "a provider:<name>/<model> owner rules after the generic provider_request owner",
			"At provider.request for provider openai/gpt-4o, the owner of provider:openai/gpt-4o (registered first) and the owner of provider_request both replace. Generic slots rule before provider: slots, so the specific owner is asked last and its replacement is the result.",
			d19StrategyProviderSlotRulesLast)),
	} {
		r.Add(c)
	}
}

func d18SingleOwner(t *conformance.T) {
	_, run := runIntercept(t, "D18", "permission.decision", `{"name":"t","hostDecision":"deny"}`, 1,
		ext{id: "one", slots: []string{"permission"}}, ext{id: "two", slots: []string{"permission"}})
	if be := run.GetBuildError(); !strings.Contains(be, "one") || !strings.Contains(be, "two") {
		t.Errorf("D18", "build error %q; want a failure naming both claimants", be)
	}
	_, run = runIntercept(t, "D17", "input.receive", `{"text":"x"}`, 1, ext{id: "one", slots: []string{"no_such_slot"}})
	if run.GetBuildError() == "" {
		t.Errorf("D17", "an invalid slot name was accepted")
	}
}

func d19Strategy(t *conformance.T) {
	calls, run := runIntercept(t, "D19", "context.prepare", `{"messages":[]}`, 1,
		ext{id: "owner", slots: []string{"context"}, points: []string{}, script: answer("replace", "", `{"messages":[{"content":"1"}]}`)}, ext{id: "member", priority: 5})
	t.Diff("D19", "call order", []string{"member.intercept", "owner.intercept"}, seq(calls, "intercept"))
	if g := run.GetResults()[0]; !sameJSON(string(g.GetPayloadJson()), `{"messages":[{"content":"1"}]}`) {
		t.Errorf("D19", "the owner's replacement did not win: %v", g)
	}
	calls, _ = runIntercept(t, "D19", "context.prepare", `{"messages":[]}`, 1,
		ext{id: "owner", slots: []string{"context"}, points: []string{}}, ext{id: "member", priority: 5, script: answer("block", "stop", "")})
	t.Diff("D19", "calls after a walk block", []string{"member.intercept"}, seq(calls, "intercept"))
	_, run = runIntercept(t, "D12", "context.prepare", `{"messages":[]}`, 1,
		ext{id: "owner", slots: []string{"context"}, points: []string{}, script: fail("x")})
	if g := run.GetResults()[0]; g.GetFailure() == nil {
		t.Errorf("D12", "a failing slot owner must fail the operation: %v", g)
	}
}

func d19StrategyOwnerBlock(t *conformance.T) {
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
}

func d19StrategySpecificRulesLast(t *conformance.T) {
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
}

func d19StrategyProviderSlotRulesLast(t *conformance.T) {
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
}
