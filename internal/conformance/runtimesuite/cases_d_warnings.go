package runtimesuite

import (
	"fmt"
	"strings"

	"github.com/abkit/abkit/internal/conformance"
)

// addDispatchWarningCases registers the cases of warnings: once per extension, in the result, redacted (D13, D15, D16).
func addDispatchWarningCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		dcase("D15/warn-once/concurrent", []string{"D15"}, "an optional extension failing in 20 concurrent dispatches is warned about once",
			"Runs 20 dispatches at once through an optional extension that errors; the dispatcher must emit exactly one warning for it.",
			d15WarnOnceConcurrent),
		dcase("D16/redaction", []string{"D16"}, "reasons and warnings leave the dispatcher with credentials redacted",
			"A block reason and an optional extension's error carry a bearer token and an API key; neither may appear in the result or warnings.",
			d16Redaction),
		dcase("D13/optional/warned-in-result", []string{"D13", "D15"}, "an optional extension's failure is skipped and warned about, in the dispatch's result and to the host",
			"An optional extension errors at input.receive before a continuing one. The dispatch succeeds with the host's payload; its result lists one warning naming the failed extension, and the dispatcher emitted one warning of kind error for it.",
			d13OptionalWarnedInResult),
	} {
		r.Add(c)
	}
}

func d15WarnOnceConcurrent(t *conformance.T) {
	_, run := runIntercept(t, "D15", "input.receive", `{"text":"x"}`, 20,
		ext{id: "flaky", script: fail("down")})
	if n := walkWarnings(run); n != 1 {
		t.Errorf("D15", "%d warnings; want exactly 1", n)
	}
}

func d16Redaction(t *conformance.T) {
	secret := "sk-abcdefghijklmnopqrstuvwxyz0123456789"
	_, run := runIntercept(t, "D16", "input.receive", `{"text":"x"}`, 1,
		ext{id: "leaky", script: fail("Authorization: Bearer " + secret)},
		ext{id: "blocker", priority: 1, script: answer("block", "key "+secret, "")})
	all := fmt.Sprint(run.GetResults(), run.GetWarnings())
	if strings.Contains(all, secret) {
		t.Errorf("D16", "a credential left the dispatcher: %s", all)
	}
}

func d13OptionalWarnedInResult(t *conformance.T) {
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
}
