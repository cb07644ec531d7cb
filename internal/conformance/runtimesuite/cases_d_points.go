package runtimesuite

import (
	"time"

	"github.com/abkit/abkit/internal/conformance"
)

// addDispatchPointCases registers the cases of points, payloads and budgets (D1-D3).
func addDispatchPointCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		dcase("D1/points/all-accepted-unknown-rejected", []string{"D1"}, "every point of D1 is accepted; an unknown point is rejected at build and at dispatch",
			"An extension whose manifest lists all seventeen points must build. A dispatch at each of the ten request points must ask it for a decision; a dispatch at each of the seven event-only points must only notify it (no decision call). A manifest naming a point outside D1 must fail the build, and a dispatch at an unknown point must be a host error that never reaches the extension.",
			d1PointsAllAcceptedUnknownRejected),
		dcase("D2/payload/wrong-type-is-host-error", []string{"D2", "D13"}, "an invalid or wrong-typed payload is a host error: the extension is never called or blamed",
			"Dispatches payloads that break their point's schema (empty input text, another point's payload, an array, a tool.before payload without a name) through a required extension. Each must come back as a host error: the extension is not asked, no extension failure names it, no warning blames it.",
			d2PayloadWrongTypeIsHostError),
		dcase("D3/budgets/per-point-and-manifest", []string{"D3"}, "call deadlines: 5 s at input/tool/permission, 30 s elsewhere, a manifest's own budget, capped at 60 s",
			"Reads the deadline each extension call observes (no waiting): about 5 s at input.receive, tool.before, tool.after and permission.decision; about 30 s at the other request points; a manifest timeout of 10 s gives about 10 s even where the default is 5 s; a manifest timeout of 90 s is capped at 60 s. 'About' is within 2 s below the budget (the call starts after the budget does) and never above it. The scenario runs under a 90 s outer deadline so that a runtime bounding the call by its caller's deadline is not blamed.",
			d3BudgetsPerPointAndManifest),
	} {
		r.Add(c)
	}
}

func d1PointsAllAcceptedUnknownRejected(t *conformance.T) {
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
}

func d2PayloadWrongTypeIsHostError(t *conformance.T) {
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
}

func d3BudgetsPerPointAndManifest(t *conformance.T) {
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
}

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

// events are the event-only points (D1) with a valid payload each.
var events = []struct{ point, payload string }{
	{"session.start", `{"sessionPath":"/s","phase":"start"}`}, {"session.end", `{"sessionPath":"/s","phase":"end"}`},
	{"session.load", `{"sessionPath":"/s","phase":"load"}`}, {"session.save", `{"sessionPath":"/s","phase":"save"}`},
	{"session.rotate", `{"sessionPath":"/s","phase":"rotate"}`}, {"system_prompt.build", `{"prompt":"p","workspaceRoot":"/w"}`},
	{"frontend.event", `{"kind":"k","text":"t","detail":"d"}`},
}
