package runtimesuite

import (
	"fmt"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addDispatchDecisionCases registers the cases of every decision at every request point, and the host verdict (D6-D14).
func addDispatchDecisionCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		dcase("D10/host-verdict", []string{"D10"}, "allow overrides a host deny with an audit note; deny overrides allow; all-continue keeps the host verdict",
			"Three dispatches at permission.decision check the host verdict rules.",
			d10HostVerdict),
	} {
		r.Add(c)
	}
	// Every decision at every request point, required and optional.
	for _, dec := range []string{"continue", "block", "replace", "replace-unknown-field", "allow", "deny", "bogus", "error", "timeout"} {
		for _, required := range []bool{true, false} {
			class := "optional"
			if required {
				class = "required"
			}
			dec, required := dec, required
			rules := map[string][]string{"continue": {"D6", "D11"}, "block": {"D7"}, "replace": {"D8"}, "replace-unknown-field": {"D8", "D14"},
				"allow": {"D9", "D14"}, "deny": {"D9", "D14"}, "bogus": {"D9", "D14"}, "error": {"D13", "D12"}, "timeout": {"D13", "D3"}}[dec]
			r.Add(dcase(fmt.Sprintf("%s/decision/%s/%s", rules[0], dec, class), rules,
				fmt.Sprintf("a %s extension answering %s, at every request point", class, dec),
				"Dispatches a payload at each of the ten request points through the extension under test (priority 0) followed by a recording extension (priority 10), and checks what the next extension saw and what the host got: continue passes the payload on and keeps the host's bytes (D6, D11); block stops (D7); a valid replace is what the next sees (D8); allow/deny end the walk at permission.decision and are violations elsewhere (D9); an unknown decision or a replacement with an unknown field is a violation (D8, D14); errors and timeouts (D3) are failures (D13). Violations and failures fail the operation for a required extension and are warned about and skipped for an optional one.",
				dDecision(dec, required, rules)))
		}
	}
}

func dDecision(dec string, required bool, rules []string) func(t *conformance.T) {
	return func(t *conformance.T) {
		for _, p := range payloads {
			var sc Script
			switch dec {
			case "replace":
				sc = answer("replace", "", p.replacement)
			case "replace-unknown-field":
				sc = answer("replace", "", `{"nope":1}`)
			case "error":
				sc = fail("boom")
			case "timeout":
				sc = func(c *Call) *abkitv1.ProbeReply {
					if c.Deadline <= 0 {
						return nil
					}
					return &abkitv1.ProbeReply{SleepNs: int64(c.Deadline + 20*time.Millisecond)}
				}
			default:
				sc = answer(dec, "because", "")
			}
			timeout := int64(0)
			if dec == "timeout" {
				timeout = int64(50 * time.Millisecond)
			}
			calls, run := runInterceptTO(t, p.point, p.payload, timeout, ext{id: "subject", required: required, script: sc}, ext{id: "next", priority: 10})
			res := run.GetResults()
			if len(res) != 1 {
				t.Fatalf(rules[0], "%s: %d results; want 1 (build error %q)", p.point, len(res), run.GetBuildError())
			}
			got := res[0]
			nextSaw := ""
			nextCalled := false
			for _, c := range calls {
				if c.Probe == "next" && c.Hook == "intercept" {
					nextCalled, nextSaw = true, c.Payload
				}
			}
			perm := p.point == "permission.decision"
			fails := dec == "error" || dec == "timeout" || dec == "bogus" || dec == "replace-unknown-field" || ((dec == "allow" || dec == "deny") && !perm)
			switch {
			case fails && required:
				if got.GetFailure() == nil || got.GetFailure().GetExtension() != "subject" {
					t.Errorf(rules[len(rules)-1], "%s: a required extension's %s must fail the operation naming it; got %v", p.point, dec, got)
				}
			case fails:
				if got.GetFailure() != nil || got.GetError() != "" {
					t.Errorf("D13", "%s: an optional extension's %s must not fail the operation; got %v", p.point, dec, got)
				}
				if !nextCalled {
					t.Errorf(rules[len(rules)-1], "%s: after an ignored %s the next extension must be called", p.point, dec)
				} else {
					seesHost(t, rules[len(rules)-1], p.point, p.payload, nextSaw, "after an ignored "+dec+" the next extension")
				}
				if walkWarnings(run) != 1 {
					t.Errorf("D13", "%s: %d warnings for an optional %s; want exactly 1: %v", p.point, walkWarnings(run), dec, run.GetWarnings())
				}
			case dec == "continue":
				if !nextCalled || string(got.GetPayloadJson()) != p.payload || got.GetChanged() {
					t.Errorf("D11", "%s: continue must pass on and return the host's bytes; next called %v, host got %q", p.point, nextCalled, got.GetPayloadJson())
				} else {
					seesHost(t, "D6", p.point, p.payload, nextSaw, "after a continue the next extension")
				}
			case dec == "block":
				if nextCalled || !got.GetBlocked() || got.GetReason() != "because" {
					t.Errorf("D7", "%s: block must stop the walk with the reason; next called %v, result %v", p.point, nextCalled, got)
				} else if t.Alternative("D7.blocked-by") == "named" && got.GetBlockedBy() != "subject" {
					t.ChoiceErrorf("D7.blocked-by", "D7", "%s: the result must name the extension that blocked; blocked_by %q", p.point, got.GetBlockedBy())
				}
			case dec == "replace":
				if !sameJSON(nextSaw, p.replacement) || !got.GetChanged() || strings.Join(got.GetReplaced(), ",") != "subject" {
					t.Errorf("D8", "%s: the next extension must see the replacement %s; saw %q, result %v", p.point, p.replacement, nextSaw, got)
				}
			default: // allow or deny at permission.decision
				if nextCalled || got.GetPermission() != dec {
					t.Errorf("D9", "%s: %s must end the walk and rule; next called %v, result %v", p.point, dec, nextCalled, got)
				} else if t.Alternative("D9.decided-by") == "named" && got.GetDecidedBy() != "subject" {
					t.ChoiceErrorf("D9.decided-by", "D9", "%s: the result must name the extension that ruled; decided_by %q", p.point, got.GetDecidedBy())
				}
			}
		}
	}
}

func d10HostVerdict(t *conformance.T) {
	deny, allow := `{"name":"t","hostDecision":"deny"}`, `{"name":"t","hostDecision":"allow"}`
	_, run := runIntercept(t, "D10", "permission.decision", deny, 1, ext{id: "a", script: answer("allow", "ok", "")})
	if g := run.GetResults()[0]; g.GetPermission() != "allow" || len(g.GetNotes()) == 0 {
		t.Errorf("D10", "allow over a host deny: %v; want allow with an audit note", g)
	}
	_, run = runIntercept(t, "D10", "permission.decision", allow, 1, ext{id: "a", script: answer("deny", "no", "")})
	if g := run.GetResults()[0]; g.GetPermission() != "deny" {
		t.Errorf("D10", "deny over a host allow: %v", g)
	}
	_, run = runIntercept(t, "D10", "permission.decision", deny, 1, ext{id: "a"})
	if g := run.GetResults()[0]; g.GetPermission() != "deny" {
		t.Errorf("D10", "all-continue must keep the host deny: %v", g)
	}
}
