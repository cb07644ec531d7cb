package runtimesuite

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// payloads are valid host payloads per request point, with odd spacing so
// that adoption (D11) is byte for byte; replacements are valid, different
// payloads.
var payloads = []struct{ point, payload, replacement string }{
	{"input.receive", `{ "text": "hi" }`, `{"text":"bye"}`},
	{"agent.before_start", `{ "model": "m", "toolCount": 1, "sessionId": "s" }`, `{"model":"n","toolCount":0,"sessionId":"s"}`},
	{"context.prepare", `{ "messages": [] }`, `{"messages":[{"role":"user","content":"x"}]}`},
	{"provider.request", `{ "request": { "messages": [], "tools": [], "maxTokens": 0 } }`, `{"request":{"messages":[{"role":"user","content":"a"}],"tools":[],"maxTokens":1}}`},
	{"provider.response", `{ "text": "t", "calls": [ { "id": "c", "name": "t", "arguments": "{}" } ] }`, `{"text":"u"}`},
	{"tool.before", `{ "name": "t", "arguments": "{}" }`, `{"name":"u"}`},
	{"permission.decision", `{ "name": "t", "readOnly": true, "hostDecision": "deny" }`, `{"name":"u","hostDecision":"deny"}`},
	{"tool.after", `{ "name": "t", "result": "1", "isError": true }`, `{"name":"u"}`},
	{"compaction.prepare", `{ "messages": [], "guidance": "g" }`, `{"messages":[{"content":"1"}]}`},
	{"compaction.complete", `{ "summary": "s" }`, `{"summary":"t"}`},
}

func needFam(f string) func(*conformance.Descriptor) string {
	return func(d *conformance.Descriptor) string {
		if !d.Has(f) {
			return "the runtime does not host family " + f
		}
		return ""
	}
}

// ext declares one probe extension.
type ext struct {
	id       string
	required bool
	priority int32
	slots    []string
	points   []string
	script   Script
}

func runIntercept(t *conformance.T, rule, point, payload string, repeat uint32, exts ...ext) ([]Call, *abkitv1.InterceptRun) {
	return runInterceptFor(t, rule, point, payload, "", repeat, exts...)
}

// runInterceptFor is runIntercept with the request's provider key set.
func runInterceptFor(t *conformance.T, rule, point, payload, provider string, repeat uint32, exts ...ext) ([]Call, *abkitv1.InterceptRun) {
	s := session(t)
	defer s.Close()
	sc := &abkitv1.InterceptScenario{BrokerId: s.Broker(), Point: point, PayloadJson: []byte(payload), Provider: provider, Repeat: repeat}
	for _, e := range exts {
		pts := e.points
		if pts == nil {
			pts = []string{point}
		}
		sc.Extensions = append(sc.Extensions, &abkitv1.ProbeSpec{Probe: s.Probe(e.id, e.script), Name: e.id,
			Manifest: &abkitv1.Manifest{PluginId: e.id, Required: e.required, Priority: e.priority, Slots: e.slots, Points: pts}})
	}
	res, err := s.RPC().RunIntercept(t.Context(), sc)
	if err != nil {
		t.Fatalf(rule, "the runtime failed to run the intercept scenario: %v", err)
	}
	calls := s.Calls()
	for _, c := range calls {
		t.Logf("#%d %s.%s %s %s", c.Seq, c.Probe, c.Hook, c.Point, c.Payload)
	}
	return calls, res
}

func answer(d, reason, repl string) Script {
	return func(c *Call) *abkitv1.ProbeReply {
		if c.Hook != "intercept" {
			return nil
		}
		return &abkitv1.ProbeReply{Decision: d, Reason: reason, ReplacementJson: []byte(repl)}
	}
}

func addInterceptCases(r *conformance.Registry) {
	addDHResultCases(r)
	add := func(id string, rules []string, summary, explain string, run func(t *conformance.T)) {
		r.Add(&conformance.Case{ID: id, Rules: rules, Summary: summary, Explain: explain, Applies: needFam("D"), Run: run})
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
			add(fmt.Sprintf("%s/decision/%s/%s", rules[0], dec, class), rules,
				fmt.Sprintf("a %s extension answering %s, at every request point", class, dec),
				"Dispatches a payload at each of the ten request points through the extension under test (priority 0) followed by a recording extension (priority 10), and checks what the next extension saw and what the host got: continue passes the payload on and keeps the host's bytes (D6, D11); block stops (D7); a valid replace is what the next sees (D8); allow/deny end the walk at permission.decision and are violations elsewhere (D9); an unknown decision or a replacement with an unknown field is a violation (D8, D14); errors and timeouts (D3) are failures (D13). Violations and failures fail the operation for a required extension and are warned about and skipped for an optional one.",
				func(t *conformance.T) {
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
				})
		}
	}
	add("D10/host-verdict", []string{"D10"}, "allow overrides a host deny with an audit note; deny overrides allow; all-continue keeps the host verdict",
		"Three dispatches at permission.decision check the host verdict rules.",
		func(t *conformance.T) {
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
		})
	add("D4/order/priority-id-registration", []string{"D4", "D5"}, "the walk runs by priority, then plugin ID; nameless entries are skipped",
		"Registers extensions out of order and checks the call order (registration order among extensions of one ID is D4/order/registration).",
		func(t *conformance.T) {
			// Two extensions of one ID are choice D4.plugin-id's case
			// (D4/order/registration).
			calls, _ := runIntercept(t, "D4", "input.receive", `{"text":"x"}`, 1,
				ext{id: "z", priority: 5}, ext{id: "b", priority: -3}, ext{id: "a", priority: 5}, ext{id: "", priority: -100}, ext{id: "y", priority: 5})
			t.Diff("D4", "call order", []string{"b.intercept", "a.intercept", "y.intercept", "z.intercept"}, seq(calls, "intercept"))
		})
	add("D15/warn-once/concurrent", []string{"D15"}, "an optional extension failing in 20 concurrent dispatches is warned about once",
		"Runs 20 dispatches at once through an optional extension that errors; the dispatcher must emit exactly one warning for it.",
		func(t *conformance.T) {
			_, run := runIntercept(t, "D15", "input.receive", `{"text":"x"}`, 20,
				ext{id: "flaky", script: fail("down")})
			if n := walkWarnings(run); n != 1 {
				t.Errorf("D15", "%d warnings; want exactly 1", n)
			}
		})
	add("D16/redaction", []string{"D16"}, "reasons and warnings leave the dispatcher with credentials redacted",
		"A block reason and an optional extension's error carry a bearer token and an API key; neither may appear in the result or warnings.",
		func(t *conformance.T) {
			secret := "sk-abcdefghijklmnopqrstuvwxyz0123456789"
			_, run := runIntercept(t, "D16", "input.receive", `{"text":"x"}`, 1,
				ext{id: "leaky", script: fail("Authorization: Bearer " + secret)},
				ext{id: "blocker", priority: 1, script: answer("block", "key "+secret, "")})
			all := fmt.Sprint(run.GetResults(), run.GetWarnings())
			if strings.Contains(all, secret) {
				t.Errorf("D16", "a credential left the dispatcher: %s", all)
			}
		})
	add("D18/single-owner", []string{"D18", "D17"}, "a second owner of a slot, or an invalid slot name, fails the build naming the claimants",
		"Two extensions claim the permission slot; then one claims a slot that does not exist. Both builds must fail.",
		func(t *conformance.T) {
			_, run := runIntercept(t, "D18", "permission.decision", `{"name":"t","hostDecision":"deny"}`, 1,
				ext{id: "one", slots: []string{"permission"}}, ext{id: "two", slots: []string{"permission"}})
			if be := run.GetBuildError(); !strings.Contains(be, "one") || !strings.Contains(be, "two") {
				t.Errorf("D18", "build error %q; want a failure naming both claimants", be)
			}
			_, run = runIntercept(t, "D17", "input.receive", `{"text":"x"}`, 1, ext{id: "one", slots: []string{"no_such_slot"}})
			if run.GetBuildError() == "" {
				t.Errorf("D17", "an invalid slot name was accepted")
			}
		})
	add("D19/strategy", []string{"D19", "D12"}, "the slot owner rules last; a walk block skips it; an owner failure is fatal",
		"The owner of the context slot replaces after a continue walk (its replacement wins); with a blocking walk member it is not called; an owner (not marked required) that errors fails the operation.",
		func(t *conformance.T) {
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
		})
	// Event-only points (D1) with a valid payload each.
	events := []struct{ point, payload string }{
		{"session.start", `{"sessionPath":"/s","phase":"start"}`}, {"session.end", `{"sessionPath":"/s","phase":"end"}`},
		{"session.load", `{"sessionPath":"/s","phase":"load"}`}, {"session.save", `{"sessionPath":"/s","phase":"save"}`},
		{"session.rotate", `{"sessionPath":"/s","phase":"rotate"}`}, {"system_prompt.build", `{"prompt":"p","workspaceRoot":"/w"}`},
		{"frontend.event", `{"kind":"k","text":"t","detail":"d"}`},
	}
	add("D1/points/all-accepted-unknown-rejected", []string{"D1"}, "every point of D1 is accepted; an unknown point is rejected at build and at dispatch",
		"An extension whose manifest lists all seventeen points must build. A dispatch at each of the ten request points must ask it for a decision; a dispatch at each of the seven event-only points must only notify it (no decision call). A manifest naming a point outside D1 must fail the build, and a dispatch at an unknown point must be a host error that never reaches the extension.",
		func(t *conformance.T) {
			var all []string
			for _, p := range payloads {
				all = append(all, p.point)
			}
			for _, e := range events {
				all = append(all, e.point)
			}
			for _, p := range payloads {
				calls, run := runIntercept(t, "D1", p.point, p.payload, 1, ext{id: "x", points: all})
				if run.GetBuildError() != "" || len(run.GetResults()) != 1 || run.GetResults()[0].GetError() != "" {
					t.Errorf("D1", "%s: build error %q, results %v; want a dispatch through x", p.point, run.GetBuildError(), run.GetResults())
					continue
				}
				t.Diff("D1", p.point+" decision calls", []string{"x.intercept"}, seq(calls, "intercept"))
			}
			for _, e := range events {
				calls, run := runIntercept(t, "D1", e.point, e.payload, 1, ext{id: "x", points: all})
				if run.GetBuildError() != "" || len(run.GetResults()) != 1 || run.GetResults()[0].GetError() != "" || run.GetResults()[0].GetFailure() != nil {
					t.Errorf("D1", "%s: build error %q, results %v; an event-only point must be accepted", e.point, run.GetBuildError(), run.GetResults())
					continue
				}
				t.Diff("D1", e.point+" (event-only) calls", []string{"x.notify"}, seq(calls))
			}
			_, run := runIntercept(t, "D1", "input.receive", `{"text":"x"}`, 1, ext{id: "x", points: []string{"input.receive", "no.such_point"}})
			if run.GetBuildError() == "" {
				t.Errorf("D1", "a manifest naming the unknown point no.such_point was accepted; the build must fail naming it")
			}
			calls, run := runIntercept(t, "D1", "no.such_point", `{"text":"x"}`, 1, ext{id: "x", points: []string{"input.receive"}})
			if rs := run.GetResults(); run.GetBuildError() != "" || len(rs) != 1 || rs[0].GetError() == "" || rs[0].GetFailure() != nil {
				t.Errorf("D1", "dispatch at an unknown point: build error %q, results %v; want a host error, not an extension failure", run.GetBuildError(), rs)
			}
			if len(calls) != 0 {
				t.Errorf("D1", "a dispatch at an unknown point reached the extension: %v", seq(calls))
			}
		})
	add("D2/payload/wrong-type-is-host-error", []string{"D2", "D13"}, "an invalid or wrong-typed payload is a host error: the extension is never called or blamed",
		"Dispatches payloads that break their point's schema (empty input text, another point's payload, an array, a tool.before payload without a name) through a required extension. Each must come back as a host error: the extension is not asked, no extension failure names it, no warning blames it.",
		func(t *conformance.T) {
			// rulesOnly payloads have the point's shape but break its
			// rules: a host error only where the host payload is
			// validated (choice D2.host-check).
			for _, b := range []struct {
				point, payload string
				rulesOnly      bool
			}{
				{"input.receive", `{"text":""}`, true},
				{"input.receive", `{"name":"t","arguments":"{}"}`, false},
				{"input.receive", `[1]`, false},
				{"tool.before", `{"text":"hi"}`, false},
				{"tool.before", `{"name":"t","arguments":{}}`, false},
				{"permission.decision", `{"name":"t","hostDecision":"maybe"}`, true},
			} {
				if b.rulesOnly && t.Alternative("D2.host-check") != "validate" {
					continue
				}
				report := func(format string, args ...any) {
					if b.rulesOnly {
						t.ChoiceErrorf("D2.host-check", "D2", format, args...)
					} else {
						t.Errorf("D2", format, args...)
					}
				}
				calls, run := runIntercept(t, "D2", b.point, b.payload, 1, ext{id: "x", required: true})
				rs := run.GetResults()
				if run.GetBuildError() != "" || len(rs) != 1 || rs[0].GetError() == "" || rs[0].GetFailure() != nil {
					report("%s %s: build error %q, results %v; want a host error, never an extension failure", b.point, b.payload, run.GetBuildError(), rs)
				}
				if n := seq(calls, "intercept"); len(n) != 0 {
					report("%s %s: the extension was asked about an invalid payload: %v", b.point, b.payload, n)
				}
				for _, w := range run.GetWarnings() {
					if w.GetExtension() == "x" {
						t.Errorf("D2", "%s %s: a warning blames the extension for the host's payload: %v", b.point, b.payload, w)
					}
				}
			}
		})
	add("D3/budgets/per-point-and-manifest", []string{"D3"}, "call deadlines: 5 s at input/tool/permission, 30 s elsewhere, a manifest's own budget, capped at 60 s",
		"Reads the deadline each extension call observes (no waiting): about 5 s at input.receive, tool.before, tool.after and permission.decision; about 30 s at the other request points; a manifest timeout of 10 s gives about 10 s even where the default is 5 s; a manifest timeout of 90 s is capped at 60 s. 'About' is within 2 s below the budget (the call starts after the budget does) and never above it. The scenario runs under a 90 s outer deadline so that a runtime bounding the call by its caller's deadline is not blamed.",
		func(t *conformance.T) {
			for _, b := range []struct {
				point    string
				manifest time.Duration
				want     time.Duration
			}{
				{"input.receive", 0, 5 * time.Second}, {"tool.before", 0, 5 * time.Second}, {"tool.after", 0, 5 * time.Second},
				{"permission.decision", 0, 5 * time.Second}, {"context.prepare", 0, 30 * time.Second}, {"provider.request", 0, 30 * time.Second},
				{"compaction.complete", 0, 30 * time.Second}, {"input.receive", 10 * time.Second, 10 * time.Second},
				{"context.prepare", 90 * time.Second, 60 * time.Second},
			} {
				payload := ""
				for _, p := range payloads {
					if p.point == b.point {
						payload = p.payload
					}
				}
				calls := deadlineRun(t, b.point, payload, b.manifest)
				if len(calls) != 1 {
					t.Errorf("D3", "%s: %d decision calls; want 1", b.point, len(calls))
					continue
				}
				if d := calls[0].Deadline; d <= b.want-2*time.Second || d > b.want {
					t.Errorf("D3", "%s with manifest timeout %v: the call's deadline is in %v; want a budget of %v (within 2 s below it)", b.point, b.manifest, d, b.want)
				}
			}
		})
	add("D5/nameless-skipped", []string{"D5"}, "a contribution without a plugin ID is skipped: never called, no build error",
		"A nameless extension sits between two named ones at input.receive. The dispatcher must build, never call the nameless one (neither for a decision nor for the event), and walk the named ones.",
		func(t *conformance.T) {
			calls, run := runIntercept(t, "D5", "input.receive", `{"text":"x"}`, 1, ext{id: "a"}, ext{id: "", priority: 1, script: answer("block", "nameless", "")}, ext{id: "b", priority: 2})
			if run.GetBuildError() != "" {
				t.Errorf("D5", "a nameless contribution failed the build (%q); it must be skipped", run.GetBuildError())
			}
			t.Diff("D5", "calls", []string{"a.intercept", "b.intercept", "a.notify", "b.notify"}, sortNotify(seq(calls)))
			if rs := run.GetResults(); len(rs) == 1 && rs[0].GetBlocked() {
				t.Errorf("D5", "the nameless contribution took part in the walk: %v", rs[0])
			}
		})
	add("D20/events/slot-owners", []string{"D20", "D19"}, "slot owners get the events of the points their slot observes, once each",
		"The owner of the context slot (no chain points) and a chain member at context.prepare each get the final payload once; the owner of session_policy gets session.start, an event-only point its slot observes, once; an extension at no point and owning no slot gets nothing.",
		func(t *conformance.T) {
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
		})
	add("D20/events/drops-warned-once", []string{"D20", "D15"}, "a full event queue drops events without blocking, with exactly one warning",
		"Dispatches 1,500 concurrent operations at the event-only point session.save to an observer whose first event takes 300 ms. A bounded queue fills: each event is either delivered or dropped, and if any was dropped there is exactly one drop warning. A runtime whose queue holds all 1,500 passes with no warning (the drop path is then not exercised, and the case logs it); the spec does not fix the queue size, so a larger queue is not a failure.",
		func(t *conformance.T) {
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
		})
	add("D20/events", []string{"D20"}, "after a walk, blocked or not, each member gets the final payload once; none after a required failure",
		"Checks the notify calls after a completed walk, after a block, and after a required failure.",
		func(t *conformance.T) {
			calls, _ := runIntercept(t, "D20", "input.receive", `{"text":"x"}`, 1, ext{id: "a"}, ext{id: "b", priority: 1, script: answer("block", "no", "")})
			n := seq(calls, "notify")
			if len(n) != 2 || !contains(n, "a.notify") || !contains(n, "b.notify") {
				t.Errorf("D20", "notify calls %v; want one each for a and b", n)
			}
			calls, _ = runIntercept(t, "D20", "input.receive", `{"text":"x"}`, 1, ext{id: "a", required: true, script: fail("x")})
			if n := seq(calls, "notify"); len(n) != 0 {
				t.Errorf("D20", "events after a required failure: %v", n)
			}
		})
}

// sortNotify keeps decision calls in order and sorts the notify calls that
// follow (events are delivered asynchronously, in no fixed order across
// extensions).
func sortNotify(xs []string) []string {
	var calls, notes []string
	for _, x := range xs {
		if strings.HasSuffix(x, ".notify") {
			notes = append(notes, x)
		} else {
			calls = append(calls, x)
		}
	}
	sort.Strings(notes)
	return append(calls, notes...)
}

// deadlineRun dispatches payload at point through one recording extension
// with the given manifest timeout and returns its decision calls. The RPC
// gets a 90 s deadline of its own (still cancelled with the case), so a
// runtime bounding calls by its caller's deadline shows the real budget.
func deadlineRun(t *conformance.T, point, payload string, manifest time.Duration) []Call {
	s := session(t)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 90*time.Second)
	defer cancel()
	stop := context.AfterFunc(t.Context(), cancel)
	defer stop()
	sc := &abkitv1.InterceptScenario{BrokerId: s.Broker(), Point: point, PayloadJson: []byte(payload),
		Extensions: []*abkitv1.ProbeSpec{{Probe: s.Probe("x", nil), Name: "x",
			Manifest: &abkitv1.Manifest{PluginId: "x", Points: []string{point}, TimeoutNs: int64(manifest)}}}}
	res, err := s.RPC().RunIntercept(ctx, sc)
	if err != nil {
		t.Fatalf("D3", "the runtime failed to run the intercept scenario: %v", err)
	}
	if res.GetBuildError() != "" {
		t.Fatalf("D3", "build error %q", res.GetBuildError())
	}
	var out []Call
	for _, c := range s.Calls() {
		if c.Hook == "intercept" {
			out = append(out, c)
		}
	}
	return out
}

// runInterceptTO is runIntercept with a manifest timeout on the first
// extension.
func runInterceptTO(t *conformance.T, point, payload string, timeout int64, exts ...ext) ([]Call, *abkitv1.InterceptRun) {
	s := session(t)
	defer s.Close()
	sc := &abkitv1.InterceptScenario{BrokerId: s.Broker(), Point: point, PayloadJson: []byte(payload)}
	for i, e := range exts {
		m := &abkitv1.Manifest{PluginId: e.id, Required: e.required, Priority: e.priority, Slots: e.slots, Points: []string{point}}
		if i == 0 {
			m.TimeoutNs = timeout
		}
		sc.Extensions = append(sc.Extensions, &abkitv1.ProbeSpec{Probe: s.Probe(e.id, e.script), Name: e.id, Manifest: m})
	}
	res, err := s.RPC().RunIntercept(t.Context(), sc)
	if err != nil {
		t.Fatalf("D13", "the runtime failed to run the intercept scenario: %v", err)
	}
	return s.Calls(), res
}

func runHooks(t *conformance.T, rule, kind, policy, input string, hs ...*abkitv1.HookSpec) func(scripts ...Script) ([]Call, *abkitv1.HookRun) {
	return func(scripts ...Script) ([]Call, *abkitv1.HookRun) {
		s := session(t)
		defer s.Close()
		sc := &abkitv1.HookScenario{BrokerId: s.Broker(), Kind: kind, ToolPolicy: policy, InputJson: []byte(input)}
		for i, h := range hs {
			var sc2 Script
			if i < len(scripts) {
				sc2 = scripts[i]
			}
			sc.Hooks = append(sc.Hooks, &abkitv1.ProbeSpec{Probe: s.Probe(h.GetId(), sc2), Name: h.GetId(), Hook: h})
		}
		res, err := s.RPC().RunHooks(t.Context(), sc)
		if err != nil {
			t.Fatalf(rule, "the runtime failed to run the hook scenario: %v", err)
		}
		return s.Calls(), res
	}
}

func hspec(id string, order int64, policy, kind string) *abkitv1.HookSpec {
	return &abkitv1.HookSpec{Id: id, Order: order, Policy: policy, Kind: kind}
}

// fail answers every intercept, submit, part or tool call with an error
// (notify calls succeed).
func fail(msg string) Script {
	return func(c *Call) *abkitv1.ProbeReply {
		if c.Hook == "notify" {
			return nil
		}
		return &abkitv1.ProbeReply{Error: msg}
	}
}

// walkWarnings counts the warnings about calls (not event delivery).
func walkWarnings(run *abkitv1.InterceptRun) int {
	n := 0
	for _, w := range run.GetWarnings() {
		if !strings.HasPrefix(w.GetKind(), "event") {
			n++
		}
	}
	return n
}

func value(v string) Script {
	return func(*Call) *abkitv1.ProbeReply { return &abkitv1.ProbeReply{ValueJson: []byte(v)} }
}

func addHookCases(r *conformance.Registry) {
	add := func(id string, rules []string, summary, explain string, run func(t *conformance.T)) {
		r.Add(&conformance.Case{ID: id, Rules: rules, Summary: summary, Explain: explain, Applies: needFam("H"), Run: run})
	}
	sub := `{"model":"m"}`
	add("H1/order", []string{"H1"}, "hooks run by order, then ID, then registration",
		"Registers submit hooks out of order and checks the call order.",
		func(t *conformance.T) {
			calls, _ := runHooks(t, "H1", "submit", "", sub, hspec("z", 1, "fail-open", "submit"), hspec("b", 0, "fail-open", "submit"),
				hspec("a", 1, "fail-open", "submit"), hspec("a", 1, "fail-open", "submit"))()
			t.Diff("H1", "order", []string{"b.submit", "a.submit", "a.submit", "z.submit"}, seq(calls))
		})
	add("H2/fail-open", []string{"H2"}, "a fail-open hook's error is recorded; the next hook sees the value from before it",
		"The first hook changes the model and fails under fail-open; the second must see the original model.",
		func(t *conformance.T) {
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
		})
	for _, pol := range []string{"fail-closed", "unspecified"} {
		pol := pol
		add("H3/stops/"+pol, []string{"H3"}, "a "+pol+" hook's error (and panic) stops the chain and is returned",
			"A failing (then panicking) submit hook with policy "+pol+" must stop the chain: the next hook is not called and the error comes back. Unspecified means fail-closed on the hook bus.",
			func(t *conformance.T) {
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
			})
	}
	add("H4/submit-reject", []string{"H4"}, "a submit rejection stops the chain and reaches the caller with its reason",
		"The first hook rejects; the second must not run; the caller gets a rejection carrying the reason.",
		func(t *conformance.T) {
			calls, run := runHooks(t, "H4", "submit", "", sub, hspec("a", 0, "fail-open", "submit"), hspec("b", 1, "fail-open", "submit"))(
				func(*Call) *abkitv1.ProbeReply { return &abkitv1.ProbeReply{Reject: "not today"} })
			if len(calls) != 1 || run.GetFailure().GetKind() != "reject" || run.GetFailure().GetMessage() != "not today" {
				t.Errorf("H4", "calls %v, failure %v; want a rejection with reason \"not today\"", seq(calls), run.GetFailure())
			}
		})
	ev := `{"phase":"start","call_id":"c","name":"t"}`
	add("H5/tool-decisions", []string{"H5"}, "pass, rewrite and replace continue with the right event; swallow stops later reactors",
		"Three tool reactors: rewrite the name, replace the event, then pass; then a chain where the first swallows.",
		func(t *conformance.T) {
			calls, run := runHooks(t, "H5", "tool", "", ev, hspec("r1", 0, "", "tool"), hspec("r2", 1, "", "tool"), hspec("r3", 2, "", "tool"))(
				value(`{"kind":"rewrite","fields":{"name":"u"}}`), value(`{"kind":"replace","event":{"phase":"start","call_id":"d","name":"v"}}`))
			if len(calls) != 3 || !strings.Contains(calls[1].Value, `"u"`) || !strings.Contains(calls[2].Value, `"v"`) || !strings.Contains(string(run.GetOutputJson()), `"v"`) {
				t.Errorf("H5", "rewrite/replace not applied in order: calls %v, output %s", calls, run.GetOutputJson())
			}
			calls, run = runHooks(t, "H5", "tool", "", ev, hspec("s", 0, "", "tool"), hspec("later", 1, "", "tool"))(value(`{"kind":"swallow"}`))
			if len(calls) != 1 || !run.GetSwallowed() || run.GetSwallowedBy() != "s" {
				t.Errorf("H5", "swallow: calls %v, swallowed %v by %q; want the chain stopped at s", seq(calls), run.GetSwallowed(), run.GetSwallowedBy())
			}
		})
	for _, pol := range []string{"fail-open", "fail-closed", "swallow"} {
		pol := pol
		add("H6/tool-policy/"+pol, []string{"H6", "H5"}, "a failing or invalid reactor under bus policy "+pol,
			"A reactor errors (then answers an invalid rewrite) under bus policy "+pol+": fail-open keeps the event and continues, fail-closed stops with the error, swallow drops the event.",
			func(t *conformance.T) {
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
			})
	}
}

// sameJSON compares two JSON objects, treating absent fields and zero
// values alike: a runtime may re-encode a replacement canonically, with its
// zero fields written out (D8: omitted fields become zero).
func sameJSON(a, b string) bool {
	norm := func(s string) map[string]any {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return nil
		}
		for k, v := range m {
			if v == nil || v == false || v == "" || v == 0.0 || reflect.DeepEqual(v, []any{}) || reflect.DeepEqual(v, map[string]any{}) {
				delete(m, k)
			}
		}
		return m
	}
	na, nb := norm(a), norm(b)
	return na != nil && reflect.DeepEqual(na, nb)
}
