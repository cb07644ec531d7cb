package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/sdk/intercept"
)

var bg = context.Background()

// D1: event-only points get no decisions, only the broadcast.
func TestEventOnlyPointsD1D20(t *testing.T) {
	if n := len(intercept.Points()); n != 17 {
		t.Fatalf("Points() has %d points, want 17", n)
	}
	for _, p := range intercept.Points() {
		f := answers(intercept.Block("no"))
		d, _ := build(t, required(contrib("a", f, p)))
		var payload any = intercept.PayloadFor(p)
		switch x := payload.(type) {
		case *intercept.SessionPayload:
			x.Phase = strings.TrimPrefix(string(p), "session.")
		case *intercept.FrontendEventPayload:
			x.Kind = "status"
		case *intercept.SystemPromptPayload:
			x.WorkspaceRoot = "/w"
		}
		if !intercept.IsEventOnly(p) {
			continue
		}
		res, err := d.Dispatch(bg, Request{Point: p, Payload: payload})
		if err != nil || res.Blocked {
			t.Fatalf("%s: res=%+v err=%v", p, res, err)
		}
		d.Close()
		if len(f.seenCalls()) != 0 {
			t.Errorf("%s: event-only point called Call", p)
		}
		if ev := f.seenEvents(); len(ev) != 1 || !strings.HasPrefix(ev[0], string(p)+" ") {
			t.Errorf("%s: events = %q, want one", p, ev)
		}
	}
}

// D2: the wrong payload type, or an invalid host payload, is a host error
// and never reaches or blames an extension.
func TestWrongPayloadIsHostErrorD2(t *testing.T) {
	f := &fake{}
	d, w := build(t, required(contrib("a", f, intercept.ToolBefore)))
	_, err := d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: &intercept.InputPayload{Text: "x"}})
	if !errors.Is(err, ErrWrongPayload) {
		t.Fatalf("err = %v, want ErrWrongPayload", err)
	}
	var ee *ExtensionError
	if errors.As(err, &ee) {
		t.Fatalf("host error blamed on extension: %v", err)
	}
	_, err = d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: 42})
	if !errors.Is(err, ErrWrongPayload) {
		t.Fatalf("int payload: err = %v, want ErrWrongPayload", err)
	}
	_, err = d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: &intercept.ToolBeforePayload{}})
	if !errors.Is(err, ErrInvalidPayload) {
		t.Fatalf("empty name: err = %v, want ErrInvalidPayload", err)
	}
	_, err = d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: json.RawMessage(`{"name":"ls","bogus":1}`)})
	if !errors.Is(err, ErrInvalidPayload) {
		t.Fatalf("raw unknown field: err = %v, want ErrInvalidPayload", err)
	}
	_, err = d.Dispatch(bg, Request{Point: "tool.nope", Payload: &intercept.ToolBeforePayload{Name: "x"}})
	if !errors.Is(err, ErrUnknownPoint) {
		t.Fatalf("err = %v, want ErrUnknownPoint", err)
	}
	// Value (non-pointer) payloads of the right type are accepted.
	if _, err := d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: intercept.ToolBeforePayload{Name: "ls"}}); err != nil {
		t.Fatalf("value payload: %v", err)
	}
	if n := len(f.seenCalls()); n != 1 {
		t.Errorf("extension called %d times, want 1 (only for the valid dispatch)", n)
	}
	if len(w.all()) != 0 {
		t.Errorf("host errors produced warnings: %v", w.all())
	}
}

// D3: default budgets, manifest override capped at 60 s, late answers and
// ctx-honouring timeouts are failures.
func TestBudgetsD3(t *testing.T) {
	var got sync.Map
	probe := &fake{answer: func(ctx context.Context, p intercept.Point, _ json.RawMessage) (intercept.Answer, error) {
		dl, ok := ctx.Deadline()
		if !ok {
			return intercept.Answer{}, errors.New("no deadline")
		}
		got.Store(p, time.Until(dl))
		return intercept.Continue(), nil
	}}
	cases := []struct {
		point intercept.Point
		want  time.Duration
	}{
		{intercept.InputReceive, 5 * time.Second}, {intercept.ToolBefore, 5 * time.Second},
		{intercept.ToolAfter, 5 * time.Second}, {intercept.PermissionDecision, 5 * time.Second},
		{intercept.ContextPrepare, 30 * time.Second}, {intercept.ProviderRequest, 30 * time.Second},
	}
	s := samples()
	var pts []intercept.Point
	for _, c := range cases {
		pts = append(pts, c.point)
	}
	d, _ := build(t, contrib("probe", probe, pts...))
	for _, c := range cases {
		if _, err := d.Dispatch(bg, Request{Point: c.point, Payload: s[c.point][0]}); err != nil {
			t.Fatal(err)
		}
		v, _ := got.Load(c.point)
		if left := v.(time.Duration); left > c.want || left < c.want-time.Second {
			t.Errorf("%s: budget %v, want %v", c.point, left, c.want)
		}
	}

	capped := contrib("long", probe, intercept.ContextPrepare)
	capped.Manifest.Timeout = 5 * time.Minute
	d2, _ := build(t, capped)
	if notes := d2.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "capped at 1m0s") {
		t.Errorf("notes = %q, want a cap note", notes)
	}
	d2.Dispatch(bg, Request{Point: intercept.ContextPrepare, Payload: s[intercept.ContextPrepare][0]})
	if v, _ := got.Load(intercept.ContextPrepare); v.(time.Duration) > time.Minute || v.(time.Duration) < 59*time.Second {
		t.Errorf("capped budget = %v, want 60s", v)
	}

	honours := &fake{answer: func(ctx context.Context, _ intercept.Point, _ json.RawMessage) (intercept.Answer, error) {
		<-ctx.Done()
		return intercept.Answer{}, ctx.Err()
	}}
	late := &fake{answer: func(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
		time.Sleep(30 * time.Millisecond)
		return intercept.Continue(), nil // a valid answer, but too late
	}}
	for name, ext := range map[string]*fake{"honours ctx": honours, "late answer": late} {
		c := required(contrib("slow", ext, intercept.ToolBefore))
		c.Manifest.Timeout = 10 * time.Millisecond
		d3, _ := build(t, c)
		_, err := d3.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: s[intercept.ToolBefore][0]})
		var ee *ExtensionError
		if !errors.As(err, &ee) || ee.Kind != KindTimeout || !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err = %v, want a timeout ExtensionError", name, err)
		}
	}
	if _, err := New([]Contribution{{Manifest: intercept.Manifest{PluginID: "n", Timeout: -1}, Extension: &fake{}}}, Options{}); err == nil {
		t.Error("negative timeout accepted")
	}
}

// D4: priority ascending, then plugin ID, then registration order; frozen
// at build; priority bounds are a build error.
func TestFrozenOrderD4(t *testing.T) {
	var mu sync.Mutex
	var order []string
	rec := func(id string) *fake {
		return &fake{answer: func(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
			mu.Lock()
			order = append(order, id)
			mu.Unlock()
			return intercept.Continue(), nil
		}}
	}
	mk := func(id, tag string, prio int) Contribution {
		c := contrib(id, rec(id+tag), intercept.InputReceive)
		c.Manifest.Priority = prio
		return c
	}
	cs := []Contribution{mk("b", "", 0), mk("a", "#1", 0), mk("z", "", -1000), mk("a", "#2", 0), mk("c", "", 1000), mk("m", "", -5)}
	d, _ := build(t, cs...)
	cs[0].Manifest.Priority = -1000 // later changes do not affect the built dispatcher
	cs[1].Manifest.PluginID = "zzz"
	if _, err := d.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{Text: "x"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"z", "m", "a#1", "a#2", "b", "c"}
	if !slices.Equal(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
	if got := d.Chain(intercept.InputReceive); !slices.Equal(got, []string{"z", "m", "a", "a", "b", "c"}) {
		t.Errorf("Chain = %v", got)
	}
	for _, prio := range []int{-1001, 1001} {
		_, err := New([]Contribution{mk("p", "", prio)}, Options{})
		if err == nil || !strings.Contains(err.Error(), "out of range") || !strings.Contains(err.Error(), `"p"`) {
			t.Errorf("priority %d: err = %v, want out-of-range error naming p", prio, err)
		}
	}
}

// D5: a contribution without a plugin ID is skipped with a note.
func TestUnaddressableSkippedD5(t *testing.T) {
	anon := answers(intercept.Block("should never run"))
	d, _ := build(t, contrib("", anon, intercept.InputReceive), contrib("ok", &fake{}, intercept.InputReceive))
	res, err := d.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{Text: "x"}})
	if err != nil || res.Blocked {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if len(anon.seenCalls()) != 0 {
		t.Error("unaddressable contribution was called")
	}
	if notes := d.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "#0") || !strings.Contains(notes[0], "D5") {
		t.Errorf("notes = %q", notes)
	}
}

// D6, D7, D8: continue passes on, block stops, replace substitutes the
// whole value strictly and the next extension sees it.
func TestWalkD6D7D8(t *testing.T) {
	repl := answers(intercept.Answer{Decision: intercept.DecisionReplace, Replacement: json.RawMessage(`{"name":"cat"}`)})
	after := &fake{}
	d, _ := build(t,
		contrib("1-cont", &fake{}, intercept.ToolBefore),
		contrib("2-repl", repl, intercept.ToolBefore),
		contrib("3-see", after, intercept.ToolBefore))
	host := &intercept.ToolBeforePayload{Name: "ls", Arguments: `{"a":1}`}
	res, err := d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: host})
	if err != nil {
		t.Fatal(err)
	}
	// D8: omitted fields (arguments) are zero, not leaked from the old value.
	if got := after.seenCalls(); len(got) != 1 || got[0] != `{"name":"cat"}` {
		t.Errorf("next extension saw %q", got)
	}
	v, ok := res.Value.(*intercept.ToolBeforePayload)
	if !ok || v.Name != "cat" || v.Arguments != "" || !res.Changed {
		t.Errorf("final value %+v changed=%v", res.Value, res.Changed)
	}
	if !slices.Equal(res.Replaced, []string{"2-repl"}) {
		t.Errorf("Replaced = %v", res.Replaced)
	}
	if host.Name != "ls" || host.Arguments != `{"a":1}` {
		t.Error("host payload was modified")
	}

	blk := answers(intercept.Block("nope"))
	never := &fake{}
	d2, _ := build(t, contrib("a", blk, intercept.ToolBefore), contrib("b", never, intercept.ToolBefore))
	res, err = d2.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: host})
	if err != nil || !res.Blocked || res.BlockedBy != "a" || res.Reason != "nope" || res.BlockPhase != "walk" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if len(never.seenCalls()) != 0 {
		t.Error("walk went on after block")
	}
}

// D8, D14: strict decoding of replacements: unknown fields, wrong types,
// wrong case, duplicates, trailing data and invalid values are violations.
func TestStrictReplacementD8D14(t *testing.T) {
	bad := []string{
		`{"name":"x","bogus":1}`,
		`{"Name":"x"}`,
		`{"name":"x","name":"y"}`,
		`{"name":5}`,
		`{"name":"x"} {}`,
		`{"name":"x"}x`,
		`{"name":""}`,
		`{"name":"x","arguments":[1]}`,
		`{"name":"x","arguments":"[1]"}`,
		`{"name":"x","arguments":{}}`,
		`[]`,
		`null`,
		``,
	}
	for _, r := range bad {
		ext := answers(intercept.Answer{Decision: intercept.DecisionReplace, Replacement: json.RawMessage(r)})
		d, w := build(t, contrib("opt", ext, intercept.ToolBefore))
		res, err := d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: &intercept.ToolBeforePayload{Name: "ls"}})
		if err != nil || res.Changed || len(res.Replaced) != 0 {
			t.Errorf("optional %q: res=%+v err=%v, want ignored", r, res, err)
		}
		if ws := w.all(); len(ws) != 1 || ws[0].Kind != KindViolation {
			t.Errorf("optional %q: warnings %v, want one violation", r, ws)
		}
		dr, _ := build(t, required(contrib("req", ext, intercept.ToolBefore)))
		_, err = dr.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: &intercept.ToolBeforePayload{Name: "ls"}})
		if !errors.Is(err, ErrViolation) || !strings.Contains(err.Error(), `"req"`) || !strings.Contains(err.Error(), "tool.before") {
			t.Errorf("required %q: err = %v, want violation naming req and tool.before", r, err)
		}
	}
}

// D9, D10: allow/deny end the walk at permission.decision; host verdict.
func TestPermissionD9D10(t *testing.T) {
	perm := func(host intercept.Decision) *intercept.PermissionPayload {
		return &intercept.PermissionPayload{Name: "rm", HostDecision: host}
	}
	never := &fake{}
	cases := []struct {
		name      string
		host      intercept.Decision
		ans       intercept.Answer
		want      intercept.Decision
		by        string
		wantNotes int
	}{
		{"allow overrides host deny with audit note", intercept.DecisionDeny, intercept.Allow("trusted"), intercept.DecisionAllow, "x", 1},
		{"deny overrides host allow", intercept.DecisionAllow, intercept.Deny("risky"), intercept.DecisionDeny, "x", 0},
		{"continue keeps host allow", intercept.DecisionAllow, intercept.Continue(), intercept.DecisionAllow, "", 0},
		{"continue keeps host deny", intercept.DecisionDeny, intercept.Continue(), intercept.DecisionDeny, "", 0},
		{"allow on host allow, no note", intercept.DecisionAllow, intercept.Allow(""), intercept.DecisionAllow, "x", 0},
	}
	for _, c := range cases {
		d, _ := build(t, contrib("x", answers(c.ans), intercept.PermissionDecision), contrib("y", never, intercept.PermissionDecision))
		res, err := d.Dispatch(bg, Request{Point: intercept.PermissionDecision, Payload: perm(c.host)})
		if err != nil || res.Permission != c.want || res.DecidedBy != c.by || len(res.Notes) != c.wantNotes {
			t.Errorf("%s: res=%+v err=%v", c.name, res, err)
		}
	}
	if n := len(never.seenCalls()); n != 2 {
		t.Errorf("second extension called %d times, want 2 (only after the continues)", n)
	}
	// A replacement cannot change the host verdict (D10).
	flip := answers(intercept.Answer{Decision: intercept.DecisionReplace, Replacement: json.RawMessage(`{"name":"rm","hostDecision":"allow"}`)})
	d, _ := build(t, contrib("flip", flip, intercept.PermissionDecision))
	res, _ := d.Dispatch(bg, Request{Point: intercept.PermissionDecision, Payload: perm(intercept.DecisionDeny)})
	if res.Permission != intercept.DecisionDeny || !res.Changed {
		t.Errorf("replaced hostDecision changed the verdict: %+v", res)
	}
}

// D11: with no effective replace the host keeps its bytes and value.
func TestAdoptionByteForByteD11(t *testing.T) {
	raw := json.RawMessage("{ \"name\" : \"ls\",\n \"arguments\": \"{\\\"z\\\":1}\" }")
	d, _ := build(t, contrib("a", &fake{}, intercept.ToolBefore))
	res, err := d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: raw})
	if err != nil || res.Changed {
		t.Fatal(res, err)
	}
	if &res.Payload[0] != &raw[0] || string(res.Payload) != string(raw) {
		t.Errorf("payload %q is not the host's own bytes", res.Payload)
	}
	if r, ok := res.Value.(json.RawMessage); !ok || &r[0] != &raw[0] {
		t.Errorf("value %T is not the host's own", res.Value)
	}
	host := &intercept.ToolBeforePayload{Name: "ls"}
	same := answers(intercept.Answer{Decision: intercept.DecisionReplace, Replacement: json.RawMessage(`{"name":"ls"}`)})
	d2, _ := build(t, contrib("same", same, intercept.ToolBefore))
	res, err = d2.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: host})
	if err != nil || res.Changed || res.Value != any(host) || !slices.Equal(res.Replaced, []string{"same"}) {
		t.Errorf("identity replace: res=%+v err=%v", res, err)
	}
	// A replace of the raw payload by its equivalent keeps the raw bytes.
	d3, _ := build(t, contrib("same", answers(intercept.Answer{Decision: intercept.DecisionReplace,
		Replacement: json.RawMessage(`{"name":"ls","arguments":"{\"z\":1}"}`)}), intercept.ToolBefore))
	res, _ = d3.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: raw})
	if res.Changed || &res.Payload[0] != &raw[0] {
		t.Errorf("equivalent replace of raw payload lost the host bytes: %q", res.Payload)
	}
}

// D12, D13: required class and failures.
func TestFailuresD12D13(t *testing.T) {
	s := samples()[intercept.ToolBefore][0]
	kinds := map[Kind]intercept.Extension{
		KindError:     failsWith(errors.New("boom")),
		KindNoProcess: failsWith(fmt.Errorf("plugin host: %w", intercept.ErrNoProcess)),
		KindPanic:     &fake{answer: func(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) { panic("kaput") }},
	}
	for kind, ext := range kinds {
		for _, c := range []Contribution{
			required(contrib("req", ext, intercept.ToolBefore)),
			withSlots(contrib("owner", ext, intercept.ToolBefore), "tool:other"), // D12: owning any slot
		} {
			d, _ := build(t, c)
			_, err := d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: s})
			var ee *ExtensionError
			if !errors.As(err, &ee) || ee.Kind != kind || ee.Extension != c.Manifest.PluginID || ee.Point != intercept.ToolBefore {
				t.Errorf("%s %s: err = %v", kind, c.Manifest.PluginID, err)
			}
			if !strings.Contains(err.Error(), c.Manifest.PluginID) || !strings.Contains(err.Error(), "tool.before") {
				t.Errorf("error does not name extension and point: %v", err)
			}
		}
		next := answers(intercept.Block("second"))
		d, w := build(t, contrib("opt", ext, intercept.ToolBefore), contrib("p", next, intercept.ToolBefore))
		for range 3 {
			res, err := d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: s})
			if err != nil || res.BlockedBy != "p" {
				t.Errorf("optional %s: res=%+v err=%v, want skipped", kind, res, err)
			}
		}
		if ws := w.all(); len(ws) != 1 || ws[0].Kind != kind || ws[0].Extension != "opt" {
			t.Errorf("optional %s: warnings = %+v, want exactly one", kind, ws)
		}
	}
	if !errors.Is(&ExtensionError{Kind: KindNoProcess}, ErrNoProcess) {
		t.Error("no-process error does not unwrap to ErrNoProcess")
	}
}

// Host cancellation is the host's, not the extension's.
func TestHostCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	cancel()
	d, w := build(t, required(contrib("a", &fake{}, intercept.InputReceive)))
	_, err := d.Dispatch(ctx, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{Text: "x"}})
	var ee *ExtensionError
	if !errors.Is(err, context.Canceled) || errors.As(err, &ee) || len(w.all()) != 0 {
		t.Errorf("err = %v", err)
	}
}

// D9, D12–D14: every decision at every request point, for a required and
// an optional extension.
func TestDecisionMatrixD6D7D8D9D12D14(t *testing.T) {
	s := samples()
	decisions := []intercept.Decision{"continue", "block", "replace", "allow", "deny", "approve", ""}
	for _, p := range intercept.Points() {
		if intercept.IsEventOnly(p) {
			continue
		}
		host, repl := s[p][0], s[p][1]
		replBytes := mustJSON(t, repl)
		for _, dec := range decisions {
			for _, req := range []bool{true, false} {
				name := fmt.Sprintf("%s/%s/required=%v", p, dec, req)
				ans := intercept.Answer{Decision: dec, Reason: "why"}
				if dec == intercept.DecisionReplace {
					ans.Replacement = replBytes
				}
				c := contrib("x", answers(ans), p)
				c.Manifest.Required = req
				d, w := build(t, c)
				res, err := d.Dispatch(bg, Request{Point: p, Payload: host})
				hostBytes := mustJSON(t, host)
				legal := dec == "continue" || dec == "block" || dec == "replace" ||
					((dec == "allow" || dec == "deny") && p == intercept.PermissionDecision)
				if !legal {
					if req {
						var ee *ExtensionError
						if !errors.As(err, &ee) || ee.Kind != KindViolation || ee.Extension != "x" || ee.Point != p {
							t.Errorf("%s: err = %v, want violation", name, err)
						}
					} else if err != nil || res.Changed || res.Blocked || string(res.Payload) != string(hostBytes) || len(w.all()) != 1 {
						t.Errorf("%s: res=%+v err=%v warnings=%v, want ignored + one warning", name, res, err, w.all())
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: err = %v", name, err)
					continue
				}
				wantPerm := intercept.Decision("")
				if p == intercept.PermissionDecision {
					wantPerm = intercept.DecisionDeny // the sample's host verdict
				}
				switch dec {
				case "continue":
					if res.Changed || res.Blocked || string(res.Payload) != string(hostBytes) || res.Value != any(host) || res.Permission != wantPerm {
						t.Errorf("%s: %+v", name, res)
					}
				case "block":
					if !res.Blocked || res.BlockedBy != "x" || res.Reason != "why" || res.Changed {
						t.Errorf("%s: %+v", name, res)
					}
				case "replace":
					if !res.Changed || string(res.Payload) != string(replBytes) || !slices.Equal(res.Replaced, []string{"x"}) || res.Permission != wantPerm {
						t.Errorf("%s: %+v (want payload %s)", name, res, replBytes)
					}
				case "allow", "deny":
					if res.Permission != dec || res.DecidedBy != "x" || res.Changed || res.Blocked {
						t.Errorf("%s: %+v", name, res)
					}
				}
				if len(w.all()) != 0 {
					t.Errorf("%s: unexpected warnings %v", name, w.all())
				}
			}
		}
	}
}
