package runtimesuite

import (
	"strings"

	"github.com/abkit/abkit/internal/conformance"
)

// addHooksToolCases registers the cases of tool reactors: decisions and bus policies (H5, H6).
func addHooksToolCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		hcase("H5/tool-decisions", []string{"H5"}, "pass, rewrite and replace continue with the right event; swallow stops later reactors",
			"Three tool reactors: rewrite the name, replace the event, then pass; then a chain where the first swallows.",
			h5ToolDecisions),
	} {
		r.Add(c)
	}
	for _, pol := range []string{"fail-open", "fail-closed", "swallow"} {
		pol := pol
		r.Add(hcase("H6/tool-policy/"+pol, []string{"H6", "H5"}, "a failing or invalid reactor under bus policy "+pol,
			"A reactor errors (then answers an invalid rewrite) under bus policy "+pol+": fail-open keeps the event and continues, fail-closed stops with the error, swallow drops the event.",
			h6ToolPolicy(pol)))
	}
}

func h5ToolDecisions(t *conformance.T) {
	calls, run := runHooks(t, "H5", "tool", "", ev, hspec("r1", 0, "", "tool"), hspec("r2", 1, "", "tool"), hspec("r3", 2, "", "tool"))(
		value(`{"kind":"rewrite","fields":{"name":"u"}}`), value(`{"kind":"replace","event":{"phase":"start","call_id":"d","name":"v"}}`))
	if len(calls) != 3 || !strings.Contains(calls[1].Value, `"u"`) || !strings.Contains(calls[2].Value, `"v"`) || !strings.Contains(string(run.GetOutputJson()), `"v"`) {
		t.Errorf("H5", "rewrite/replace not applied in order: calls %v, output %s", calls, run.GetOutputJson())
	}
	calls, run = runHooks(t, "H5", "tool", "", ev, hspec("s", 0, "", "tool"), hspec("later", 1, "", "tool"))(value(`{"kind":"swallow"}`))
	if len(calls) != 1 || !run.GetSwallowed() || run.GetSwallowedBy() != "s" {
		t.Errorf("H5", "swallow: calls %v, swallowed %v by %q; want the chain stopped at s", seq(calls), run.GetSwallowed(), run.GetSwallowedBy())
	}
}

func h6ToolPolicy(pol string) func(t *conformance.T) {
	return func(t *conformance.T) {
		for i, sc := range []Script{fail("x"), value(`{"kind":"rewrite","fields":{"nope":1}}`)} {
			calls, run := runHooks(t, "H6", "tool", pol, ev, hspec("bad", 0, "", "tool"), hspec("next", 1, "", "tool"))(sc)
			invalid := i == 1
			var ok bool
			switch {
			case invalid && t.Alternative("H6.invalid") == "ignored":
				ok = len(calls) == 2 && run.GetFailure() == nil && !run.GetSwallowed()
			case pol == "fail-open":
				ok = len(calls) == 2 && run.GetFailure() == nil && !run.GetSwallowed()
			case pol == "fail-closed":
				ok = len(calls) == 1 && run.GetFailure() != nil
			case pol == "swallow":
				ok = len(calls) == 1 && run.GetSwallowed()
			}
			switch {
			case !ok && invalid && pol != "fail-open":
				t.ChoiceErrorf("H6.invalid", "H6", "policy %s, an invalid rewrite (%s): calls %v, result %v", pol, t.Alternative("H6.invalid"), seq(calls), run)
			case !ok:
				t.Errorf("H6", "policy %s: calls %v, result %v", pol, seq(calls), run)
			}
		}
	}
}

// ev is the tool event of the H5 and H6 cases.
const ev = `{"phase":"start","call_id":"c","name":"t"}`
