package runtimesuite

import (
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addHooksSubmitCases registers the cases of submit hooks: fail-open, fail-closed, rejections (H2-H4).
func addHooksSubmitCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		hcase("H2/fail-open", []string{"H2"}, "a fail-open hook's error is recorded; the next hook sees the value from before it",
			"The first hook changes the model and fails under fail-open; the second must see the original model.",
			h2FailOpen),
		hcase("H4/submit-reject", []string{"H4"}, "a submit rejection stops the chain and reaches the caller with its reason",
			"The first hook rejects; the second must not run; the caller gets a rejection carrying the reason.",
			h4SubmitReject),
		hcase("H2/fail-open/errors-read", []string{"H2", "H3"}, "fail-open failures (an error, a panic) are each recorded with hook and kind; the chain goes on with the value from before",
			"Three submit hooks: a (fail-open) changes the model and errors, b (fail-open) changes the model and panics, c passes. c must see model m; the output is model m; the error list holds a (error, with its message) then b (panic); there is no failure.",
			h2FailOpenErrorsRead),
	} {
		r.Add(c)
	}
	for _, pol := range []string{"fail-closed", "unspecified"} {
		pol := pol
		r.Add(hcase("H3/stops/"+pol, []string{"H3"}, "a "+pol+" hook's error (and panic) stops the chain and is returned",
			"A failing (then panicking) submit hook with policy "+pol+" must stop the chain: the next hook is not called and the error comes back. Unspecified means fail-closed on the hook bus.",
			h3Stops(pol)))
	}
}

func h2FailOpen(t *conformance.T) {
	calls, run := runHooks(t, "H2", "submit", "", sub, hspec("a", 0, "fail-open", "submit"), hspec("b", 1, "fail-open", "submit"))(
		func(*Call) *abkitv1.ProbeReply {
			return &abkitv1.ProbeReply{ValueJson: []byte(`{"model":"changed"}`), Error: "oops"}
		})
	if len(calls) != 2 || len(run.GetErrors()) != 1 || run.GetFailure() != nil {
		t.Errorf("H2", "calls %v, result %v; want b called, one recorded error, no failure", calls, run)
		return
	}
	// What b sees follows choice H2.rollback: the value from
	// before a, or what a changed before failing.
	want := `"m"`
	if t.Alternative("H2.rollback") == "keep" {
		want = `"changed"`
	}
	if !strings.Contains(calls[1].Value, want) {
		t.ChoiceErrorf("H2.rollback", "H2", "b saw %s; want model %s (%s)", calls[1].Value, want, t.Alternative("H2.rollback"))
	}
}

func h3Stops(pol string) func(t *conformance.T) {
	return func(t *conformance.T) {
		p := pol
		if p == "unspecified" {
			p = ""
		}
		for _, sc := range []Script{fail("broke"), func(*Call) *abkitv1.ProbeReply { return &abkitv1.ProbeReply{Panic: true} }} {
			calls, run := runHooks(t, "H3", "submit", "", sub, hspec("a", 0, p, "submit"), hspec("b", 1, "fail-open", "submit"))(sc)
			if len(calls) != 1 || run.GetFailure() == nil {
				t.Errorf("H3", "calls %v, failure %v; want the chain stopped at a with its error", seq(calls), run.GetFailure())
			}
		}
	}
}

func h4SubmitReject(t *conformance.T) {
	calls, run := runHooks(t, "H4", "submit", "", sub, hspec("a", 0, "fail-open", "submit"), hspec("b", 1, "fail-open", "submit"))(
		func(*Call) *abkitv1.ProbeReply { return &abkitv1.ProbeReply{Reject: "not today"} })
	if len(calls) != 1 || run.GetFailure().GetKind() != "reject" || run.GetFailure().GetMessage() != "not today" {
		t.Errorf("H4", "calls %v, failure %v; want a rejection with reason \"not today\"", seq(calls), run.GetFailure())
	}
}

func h2FailOpenErrorsRead(t *conformance.T) {
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
}

// sub is the submit payload of the H cases.
const sub = `{"model":"m"}`
