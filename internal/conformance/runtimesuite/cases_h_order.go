package runtimesuite

import (
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addHooksOrderCases registers the cases of the order of submit, part and tool chains (H1).
func addHooksOrderCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		hcase("H1/order", []string{"H1"}, "hooks run by order, then ID, then registration",
			"Registers submit hooks out of order and checks the call order.",
			h1Order),
		hcase("H1/order/tool", []string{"H1", "H5"}, "tool reactors run by order, then ID, then registration",
			"Registers tool reactors out of order and checks the call order.",
			h1OrderTool),
	} {
		r.Add(c)
	}
	for _, kind := range []string{"request_part", "response_part"} {
		kind := kind
		r.Add(hcase("H1/order/"+kind, []string{"H1", "H2"}, "the "+kind+" chain runs by order, then ID, then registration; a fail-open error is recorded",
			"Registers "+kind+" hooks out of order (one failing under fail-open) and checks the call order, the error list and that the output is the value from before the failing hook.",
			h1OrderParts(kind)))
	}
}

func h1Order(t *conformance.T) {
	calls, _ := runHooks(t, "H1", "submit", "", sub, hspec("z", 1, "fail-open", "submit"), hspec("b", 0, "fail-open", "submit"),
		hspec("a", 1, "fail-open", "submit"), hspec("a", 1, "fail-open", "submit"))()
	t.Diff("H1", "order", []string{"b.submit", "a.submit", "a.submit", "z.submit"}, seq(calls))
}

func h1OrderParts(kind string) func(t *conformance.T) {
	return func(t *conformance.T) {
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
	}
}

func h1OrderTool(t *conformance.T) {
	ev := `{"phase":"start","call_id":"c","name":"t"}`
	calls, _ := runHooks(t, "H1", "tool", "", ev, hspec("z", 1, "", "tool"), hspec("b", 0, "", "tool"), hspec("a", 1, "", "tool"))()
	t.Diff("H1", "order", []string{"b.tool", "a.tool", "z.tool"}, seq(calls))
}

// part is the part payload of the H1 part-chain cases.
const part = `{"index":0,"type":"message","data":{"x":1}}`
