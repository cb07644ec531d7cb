package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/abkit/abkit/internal/dispatch"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/intercept"
)

// addDispatchCases registers the cases of a family D extension: its
// manifest and slots, its answers at each request point, its events, and
// its answers as a slot owner (D1, D3-D9, D13, D17, D19, D20).
func addDispatchCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "D1/manifest/valid", Rules: []string{"D1", "D3", "D4", "D5"},
			Summary: "the manifest has a plugin ID, known points, a priority in range, a sane timeout",
			Explain: `Checks the family D manifest: pluginId non-empty (D5: an extension
without one is skipped by every host), every point one of the 17 of D1,
priority within -1000…1000 (D4), timeout not negative and at most 60 s
(D3; larger values are capped by the host).
Fix: correct the manifest in your sdk.Extension.`,
			Applies: needFamily(family.Dispatch),
			Run:     d1ManifestValid,
		},
		{
			ID: "D17/slots/valid", Rules: []string{"D17"},
			Summary: "every slot the extension claims is a valid slot name",
			Explain: `Parses each claimed slot against the closed set of D17 (system_prompt,
context, provider_request, provider_response, compaction, session_policy,
permission, frontend_events, tool:<name>, provider:<name>/<model>,
provider:plugin/<id>/<name>/<model>). Names are case-sensitive.
Fix: use one of the listed forms; a host rejects anything else.`,
			Applies: needSlots,
			Run:     d17SlotsValid,
		},
		{
			ID: "D9/decisions/legal-per-point", Rules: []string{"D9", "D6", "D7"},
			Summary: "answers are known decisions; allow and deny only at permission.decision",
			Explain: `Calls the extension at each request point of its manifest with valid
sample payloads and checks every answer's decision: one of continue,
block, replace, allow, deny (D9), with allow and deny only at
permission.decision. A block should say why (D7).
A failure means the extension answers allow/deny elsewhere (at
tool.before, answer continue or block), or an unknown string. Fix: map
your verdicts per point.`,
			Applies: needRequestPoints,
			Run:     d9DecisionsLegalPerPoint,
		},
		{
			ID: "D8/replace/strict-decode", Rules: []string{"D8"},
			Summary: "replacements decode strictly against the point's schema and are valid",
			Explain: `For every replace answer to the sample payloads, decodes the
replacement strictly against the point's schema (one JSON object, exact
camelCase keys, no unknown field, no wrong type, no trailing data) and
validates it (D2). The replacement replaces the whole payload: omitted
fields become zero.
A failure shows the decoder's complaint. Fix: marshal the point's
payload type (intercept.Replace(&intercept.ToolBeforePayload{...})).`,
			Applies: needRequestPoints,
			Run:     d8ReplaceStrictDecode,
		},
		{
			ID: "D3/budget/answers-in-time", Rules: []string{"D3", "D13"},
			Summary: "every call answers without error within the point's budget",
			Explain: `Calls the extension at each request point with sample payloads, each
under the point's budget (5 s at input.receive, tool.* and
permission.decision, 30 s elsewhere, or the manifest's timeout). The
call must return without error before the deadline (D3); an error or
a timeout is a failure the host treats under D13.
A failure means the extension errors on valid input or does slow work
inline. Fix: return errors only for real failures; honour ctx.`,
			Applies: needRequestPoints,
			Run:     d3BudgetAnswersInTime,
		},
		{
			ID: "D20/notify/never-blocks", Rules: []string{"D20"},
			Summary: "Notify returns promptly at every point the extension observes",
			Explain: `Sends a fire-and-forget event for every point of the manifest
(request and event-only) and every slot-mapped point, and checks that
Notify returns within 1 s. The host delivers events from one worker; a
slow Notify delays every later event and, once the queue is full, events
are dropped.
Fix: hand event work to your own goroutine or queue.`,
			Applies: needFamily(family.Dispatch),
			Run:     d20NotifyNeverBlocks,
		},
		{
			ID: "D19/strategy/owner-answers", Rules: []string{"D19", "D8", "D7"},
			Summary: "as a slot owner, the extension answers continue, replace or block, through the reference dispatcher",
			Explain: `Builds the reference dispatcher with the extension as the owner of its
slots and dispatches sample payloads at each slot's request points. In
the strategy phase the owner may only continue, replace (decoded as D8)
or block; anything else, and any failure, fails the operation.
Fix: answer only those three as an owner.`,
			Applies: needValidSlots,
			Run:     d19StrategyOwnerAnswers,
		},
	} {
		r.Add(c)
	}
}

func d1ManifestValid(t *T) {
	m := t.Describe().Extension
	if m == nil {
		t.Fatalf("D1", "the descriptor lists family D but has no manifest")
	}
	if m.PluginID == "" {
		t.Errorf("D5", "pluginId is empty; hosts skip an extension without one")
	}
	for _, p := range m.Points {
		if !p.Valid() {
			t.Errorf("D1", "point %q is not one of the interception points", p)
		}
	}
	if m.Priority < intercept.MinPriority || m.Priority > intercept.MaxPriority {
		t.Errorf("D4", "priority %d is outside %d…%d", m.Priority, intercept.MinPriority, intercept.MaxPriority)
	}
	if m.Timeout < 0 {
		t.Errorf("D3", "timeout %v is negative", m.Timeout)
	} else if m.Timeout > intercept.MaxTimeout {
		t.Errorf("D3", "timeout %v is above the %v cap", m.Timeout, intercept.MaxTimeout)
	}
}

func d17SlotsValid(t *T) {
	for _, s := range t.Describe().Extension.Slots {
		if _, err := intercept.ParseSlot(s); err != nil {
			t.Errorf("D17", "%v", err)
		}
	}
}

func d9DecisionsLegalPerPoint(t *T) {
	for _, a := range callAll(t) {
		if a.err != nil {
			continue // D13 failures are D3's business below
		}
		switch d := a.ans.Decision; {
		case !d.Valid():
			t.Errorf("D9", "%s answered unknown decision %q to %s", a.point, d, a.payload)
		case (d == intercept.DecisionAllow || d == intercept.DecisionDeny) && a.point != intercept.PermissionDecision:
			t.Errorf("D9", "%s answered %s to %s; allow and deny are legal only at permission.decision", a.point, d, a.payload)
		case d == intercept.DecisionBlock && a.ans.Reason == "":
			t.Errorf("D7", "%s blocked %s without a reason", a.point, a.payload)
		}
	}
}

func d8ReplaceStrictDecode(t *T) {
	for _, a := range callAll(t) {
		if a.err != nil || a.ans.Decision != intercept.DecisionReplace {
			continue
		}
		if len(a.ans.Replacement) == 0 {
			t.Errorf("D8", "%s answered replace without a replacement to %s", a.point, a.payload)
			continue
		}
		if _, err := intercept.DecodeStrict(a.point, a.ans.Replacement); err != nil {
			t.Errorf("D8", "%s replacement %s: %v", a.point, a.ans.Replacement, err)
		}
	}
}

func d3BudgetAnswersInTime(t *T) {
	m := t.Describe().Extension
	for _, a := range callAll(t) {
		if a.err != nil {
			t.Errorf("D13", "%s failed on %s: %v", a.point, a.payload, a.err)
		}
		if b := budgetOf(m, a.point); a.took > b {
			t.Errorf("D3", "%s took %v on %s, beyond its %v budget", a.point, a.took.Round(time.Millisecond), a.payload, b)
		}
	}
}

func d20NotifyNeverBlocks(t *T) {
	d := t.Describe()
	ext, err := t.Subject().Plugin().Extension.New()
	if err != nil {
		t.Fatalf("D20", "the extension could not be made: %v", err)
	}
	pts := append([]intercept.Point(nil), d.Extension.Points...)
	for _, s := range d.Extension.Slots {
		if sl, err := intercept.ParseSlot(s); err == nil {
			pts = append(pts, sl.Points()...)
		}
	}
	for _, p := range pts {
		for _, pl := range samplePayloads(p) {
			done := make(chan error, 1)
			go func() {
				defer func() {
					if r := recover(); r != nil {
						done <- fmt.Errorf("panic: %v", r)
					}
				}()
				done <- ext.Notify(p, json.RawMessage(pl))
			}()
			select {
			case err := <-done:
				t.Logf("notify %s: %v", p, err)
			case <-time.After(time.Second):
				t.Errorf("D20", "Notify at %s did not return within 1 s", p)
			case <-t.Context().Done():
				return
			}
		}
	}
}

func d19StrategyOwnerAnswers(t *T) {
	m := *t.Describe().Extension
	ext, err := t.Subject().Plugin().Extension.New()
	if err != nil {
		t.Fatalf("D19", "the extension could not be made: %v", err)
	}
	disp, err := dispatch.New([]dispatch.Contribution{{Manifest: m, Extension: ext}}, dispatch.Options{OnWarning: func(dispatch.Warning) {}})
	if err != nil {
		t.Fatalf("D19", "the reference dispatcher refused the manifest: %v", err)
	}
	defer disp.Close()
	for _, s := range m.Slots {
		sl, _ := intercept.ParseSlot(s)
		for _, p := range sl.Points() {
			if intercept.IsEventOnly(p) {
				continue
			}
			for _, pl := range samplePayloads(p) {
				if sl.Kind == intercept.SlotTool {
					pl = retool(pl, sl.Tool)
				}
				res, err := disp.Dispatch(t.Context(), dispatch.Request{Point: p, Payload: json.RawMessage(pl), Provider: sl.ProviderKey(), Trace: t.rec})
				if err == nil && res.Blocked && res.Reason == "" {
					t.Errorf("D7", "slot %s at %s on %s: the owner blocked without a reason", s, p, pl)
				}
				var ee *dispatch.ExtensionError
				if errors.As(err, &ee) {
					t.Errorf(ruleOfKind(ee.Kind), "slot %s at %s on %s: %v", s, p, pl, ee)
				}
			}
		}
	}
}

func ruleOfKind(k dispatch.Kind) string {
	switch k {
	case dispatch.KindViolation:
		return "D19"
	case dispatch.KindTimeout:
		return "D3"
	}
	return "D13"
}

// retool sets the payload's tool name so a tool:<name> slot applies.
func retool(pl, tool string) string {
	var m map[string]any
	if json.Unmarshal([]byte(pl), &m) != nil {
		return pl
	}
	m["name"] = tool
	b, _ := json.Marshal(m)
	return string(b)
}

// needSlots applies a case to an extension that claims a slot.
func needSlots(d *Reported) string {
	if r := needFamily(family.Dispatch)(d); r != "" {
		return r
	}
	if d.Extension == nil || len(d.Extension.Slots) == 0 {
		return "the extension claims no slot"
	}
	return ""
}

// needValidSlots applies a case to an extension that owns slots, all of
// them valid (D17 judges the names).
func needValidSlots(d *Reported) string {
	if r := needFamily(family.Dispatch)(d); r != "" {
		return r
	}
	if d.Extension == nil || len(d.Extension.Slots) == 0 {
		return "the extension owns no slot"
	}
	for _, s := range d.Extension.Slots {
		if _, err := intercept.ParseSlot(s); err != nil {
			return "a slot name is invalid (see D17/slots/valid)"
		}
	}
	return ""
}

// samplePayloads are valid host payloads per point (D2), several where the
// point's answer usually depends on the payload.
func samplePayloads(p intercept.Point) []string {
	msgs := `[{"role":"system","content":"be brief"},{"role":"user","content":"one"},{"role":"assistant","content":"two"},{"role":"user","content":"three"},{"role":"assistant","content":"four"},{"role":"user","content":"five"},{"role":"assistant","content":"six"},{"role":"tool","content":"seven"},{"role":"user","content":"eight"}]`
	switch p {
	case intercept.InputReceive:
		return []string{`{"text":"hello"}`, `{"text":"rm -rf / please"}`}
	case intercept.AgentBeforeStart:
		return []string{`{"model":"gpt-4o","toolCount":3,"sessionId":"s-1"}`}
	case intercept.ContextPrepare:
		return []string{`{"messages":` + msgs + `}`, `{"messages":[]}`}
	case intercept.CompactionPrepare:
		return []string{`{"messages":` + msgs + `}`, `{"messages":[]}`, `{"messages":` + msgs + `,"guidance":"keep it short"}`}
	case intercept.ProviderRequest:
		return []string{`{"request":{"messages":[{"role":"system","content":"old prompt"},{"role":"user","content":"hi"}],"tools":[{"name":"search","parameters":{"type":"object"}}],"maxTokens":256}}`, `{"request":{"messages":[],"tools":[],"maxTokens":0}}`}
	case intercept.ProviderResponse:
		return []string{`{"text":"hi","calls":[{"id":"c1","name":"search","arguments":"{\"q\":\"x\"}"}],"usage":{"promptTokens":3,"completionTokens":1,"totalTokens":4,"cacheHitTokens":0,"cacheMissTokens":3,"reasoningTokens":0,"finishReason":"tool_calls"}}`, `{"text":"","calls":[]}`}
	case intercept.ToolBefore:
		return []string{`{"name":"bash","arguments":"{\"command\":\"ls\"}"}`, `{"name":"rm","arguments":"{\"path\":\"/\"}"}`, `{"name":"read_file"}`}
	case intercept.PermissionDecision:
		return []string{`{"name":"bash","arguments":"{\"command\":\"ls\"}","readOnly":false,"hostDecision":"deny"}`, `{"name":"read_file","readOnly":true,"hostDecision":"allow"}`, `{"name":"rm","arguments":"{}","readOnly":false,"hostDecision":"allow"}`}
	case intercept.ToolAfter:
		return []string{`{"name":"bash","arguments":"{\"command\":\"ls\"}","result":"a\nb","isError":false}`, `{"name":"bash","result":"boom","isError":true}`}
	case intercept.CompactionComplete:
		return []string{`{"summary":"we talked"}`}
	case intercept.SessionStart, intercept.SessionEnd, intercept.SessionLoad, intercept.SessionSave, intercept.SessionRotate:
		return []string{fmt.Sprintf(`{"sessionPath":"/tmp/s.json","phase":%q}`, string(p)[len("session."):])}
	case intercept.SystemPromptBuild:
		return []string{`{"prompt":"You are helpful.","workspaceRoot":"/work"}`}
	case intercept.FrontendEvent:
		return []string{`{"kind":"message","text":"hi","detail":"n=1"}`}
	}
	return nil
}

// budgetOf returns the extension's budget at p (D3).
func budgetOf(m *intercept.Manifest, p intercept.Point) time.Duration {
	if m.Timeout > 0 {
		return min(m.Timeout, intercept.MaxTimeout)
	}
	return intercept.Budget(p)
}

// answer is one call of the extension and what it said.
type answer struct {
	point   intercept.Point
	payload string
	ans     intercept.Answer
	err     error
	took    time.Duration
}

// callAll calls the extension at every request point of its manifest with
// every sample payload, each under its budget.
func callAll(t *T) []answer {
	d := t.Describe()
	e := t.Subject().Plugin().Extension
	if e == nil || e.New == nil {
		t.Fatalf("D1", "the subject serves no extension although its descriptor lists family D")
	}
	ext, err := e.New()
	if err != nil {
		t.Fatalf("D13", "the extension could not be made: %v", err)
	}
	var out []answer
	for _, p := range d.Extension.Points {
		if intercept.IsEventOnly(p) || !p.Valid() {
			continue
		}
		for _, pl := range samplePayloads(p) {
			ctx, cancel := context.WithTimeout(t.Context(), budgetOf(d.Extension, p))
			start := time.Now()
			a, err := safeExtCall(ctx, ext, p, json.RawMessage(pl))
			took := time.Since(start)
			cancel()
			t.Logf("%s %s -> %s %q %s err=%v (%v)", p, pl, a.Decision, a.Reason, a.Replacement, err, took)
			out = append(out, answer{point: p, payload: pl, ans: a, err: err, took: took})
		}
	}
	return out
}

func safeExtCall(ctx context.Context, ext intercept.Extension, p intercept.Point, pl json.RawMessage) (a intercept.Answer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return ext.Call(ctx, p, pl)
}

func needRequestPoints(d *Reported) string {
	if r := needFamily(family.Dispatch)(d); r != "" {
		return r
	}
	if d.Extension == nil {
		return "the descriptor has no manifest"
	}
	for _, p := range d.Extension.Points {
		if p.Valid() && !intercept.IsEventOnly(p) {
			return ""
		}
	}
	return "the extension joins no request point"
}
