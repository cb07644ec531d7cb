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

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/intercept"
)

// D4, D15: many goroutines through one dispatcher; each warning is still
// emitted exactly once, and results stay per-operation.
func TestConcurrentWarnOnceD4D15(t *testing.T) {
	flaky := failsWith(errors.New("down"))
	viol := answers(intercept.Allow("not here"))
	badNotify := &fake{notifyErr: errors.New("notify broke")}
	repl := &fake{answer: func(_ context.Context, _ intercept.Point, p json.RawMessage) (intercept.Answer, error) {
		var v intercept.InputPayload
		json.Unmarshal(p, &v)
		return intercept.Replace(&intercept.InputPayload{Text: v.Text + "!"})
	}}
	d, w := build(t,
		contrib("flaky", flaky, intercept.InputReceive),
		contrib("viol", viol, intercept.InputReceive),
		contrib("zz-repl", repl, intercept.InputReceive),
		contrib("bad-notify", badNotify, intercept.InputReceive))
	var wg sync.WaitGroup
	errs := make(chan error, 64*50)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				text := fmt.Sprintf("g%d-%d", g, i)
				res, err := d.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{Text: text}})
				if err != nil {
					errs <- err
					return
				}
				if v := res.Value.(*intercept.InputPayload); v.Text != text+"!" {
					errs <- fmt.Errorf("got %q, want %q", v.Text, text+"!")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	d.Close()
	count := map[string]int{}
	for _, x := range w.all() {
		count[x.Extension+"/"+string(x.Kind)]++
	}
	want := map[string]int{"flaky/error": 1, "viol/violation": 1, "bad-notify/event_failure": 1}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("warning %s emitted %d times, want %d (all: %v)", k, count[k], n, count)
		}
	}
	if len(count) != len(want) && count["/event_drop"] == 0 {
		t.Errorf("unexpected warnings: %v", count)
	}
}

// D16: credentials never leave the dispatcher unredacted: block reasons,
// audit notes, errors, warnings and trace events.
func TestRedactionD16(t *testing.T) {
	const secret = "sk-ant-api03-SECRETSECRETSECRET"
	const bearer = "Bearer abcdefghijklmnopqrstuvwxyz"
	leak := func(s string) bool {
		return strings.Contains(s, "SECRETSECRET") || strings.Contains(s, "abcdefghijklmnop")
	}
	rec := trace.NewRecorder()
	var all []string

	d, w := build(t,
		contrib("opt", failsWith(errors.New("upstream said "+bearer)), intercept.PermissionDecision),
		contrib("p", answers(intercept.Allow("key "+secret)), intercept.PermissionDecision))
	res, err := d.Dispatch(bg, Request{Point: intercept.PermissionDecision, Trace: rec,
		Payload: &intercept.PermissionPayload{Name: "rm", HostDecision: intercept.DecisionDeny}})
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, res.Reason)
	all = append(all, res.Notes...)
	all = append(all, res.Warnings...)
	for _, x := range w.all() {
		all = append(all, x.Message)
	}

	d2, _ := build(t, contrib("b", answers(intercept.Block("token="+secret)), intercept.InputReceive))
	res, _ = d2.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{Text: "x"}, Trace: rec})
	all = append(all, res.Reason)

	d3, _ := build(t, required(contrib("r", failsWith(errors.New("GET https://u:"+secret+"@h/ "+bearer)), intercept.InputReceive)))
	_, err = d3.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{Text: "x"}, Trace: rec})
	if err == nil {
		t.Fatal("want error")
	}
	all = append(all, err.Error())
	for _, u := range err.(*ExtensionError).Unwrap() {
		all = append(all, u.Error())
	}
	for _, e := range rec.Events() {
		all = append(all, e.Reason, e.Error)
	}
	if len(all) < 8 {
		t.Fatalf("too few texts collected: %q", all)
	}
	redacted := 0
	for _, s := range all {
		if leak(s) {
			t.Errorf("credential leaked: %q", s)
		}
		if strings.Contains(s, "[REDACTED:") {
			redacted++
		}
	}
	if redacted < 6 {
		t.Errorf("only %d texts carry redaction markers: %q", redacted, all)
	}
}

// D17, D18: slot names and single ownership are checked at build.
func TestSlotsBuildD17D18(t *testing.T) {
	_, err := New([]Contribution{withSlots(contrib("a", &fake{}), "tools")}, Options{})
	if err == nil || !strings.Contains(err.Error(), "tool:<name>") {
		t.Errorf("invalid slot: err = %v, want error listing valid forms", err)
	}
	_, err = New([]Contribution{
		withSlots(contrib("first", &fake{}), "context"),
		withSlots(contrib("second", &fake{}), "context"),
	}, Options{})
	if err == nil || !strings.Contains(err.Error(), `"first"`) || !strings.Contains(err.Error(), `"second"`) || !strings.Contains(err.Error(), "D18") {
		t.Errorf("double claim: err = %v, want both claimants named", err)
	}
	_, err = New([]Contribution{
		withSlots(contrib("a", &fake{}), "tool:ls"),
		withSlots(contrib("b", &fake{}), "tool:cat"),
	}, Options{})
	if err != nil {
		t.Errorf("distinct tool slots: %v", err)
	}
}

// D19: the strategy phase.
func TestStrategyD19(t *testing.T) {
	p := intercept.ContextPrepare
	host := &intercept.ContextPayload{Messages: []intercept.Message{{Content: "1"}}}
	replaced := `{"messages":[{"content":"2"}]}`
	walkRepl := answers(intercept.Answer{Decision: intercept.DecisionReplace, Replacement: json.RawMessage(`{"messages":[{"content":"9"}]}`)})

	// The owner sees the walk's replacement and substitutes its own.
	own := answers(intercept.Answer{Decision: intercept.DecisionReplace, Replacement: json.RawMessage(replaced)})
	d, _ := build(t, contrib("w", walkRepl, p), withSlots(contrib("owner", own), "context"))
	res, err := d.Dispatch(bg, Request{Point: p, Payload: host})
	if err != nil || string(res.Payload) != replaced || !slices.Equal(res.Replaced, []string{"w", "owner"}) {
		t.Errorf("replace: res=%+v err=%v", res, err)
	}
	if got := own.seenCalls(); len(got) != 1 || got[0] != `{"messages":[{"content":"9"}]}` {
		t.Errorf("owner saw %q, want the walk's replacement", got)
	}
	// continue keeps.
	d, _ = build(t, contrib("w", walkRepl, p), withSlots(contrib("owner", &fake{}), "context"))
	res, _ = d.Dispatch(bg, Request{Point: p, Payload: host})
	if string(res.Payload) != `{"messages":[{"content":"9"}]}` {
		t.Errorf("continue: %s", res.Payload)
	}
	// block fails the operation.
	d, _ = build(t, withSlots(contrib("owner", answers(intercept.Block("no context"))), "context"))
	res, err = d.Dispatch(bg, Request{Point: p, Payload: host})
	if err != nil || !res.Blocked || res.BlockedBy != "owner" || res.BlockPhase != "strategy" {
		t.Errorf("block: res=%+v err=%v", res, err)
	}
	// anything else is a violation; owner failures are always fatal.
	for name, ext := range map[string]*fake{
		"allow":   answers(intercept.Allow("")),
		"unknown": answers(intercept.Answer{Decision: "maybe"}),
		"bad":     answers(intercept.Answer{Decision: intercept.DecisionReplace, Replacement: json.RawMessage(`{"messages":{}}`)}),
		"error":   failsWith(errors.New("x")),
	} {
		d, _ = build(t, withSlots(contrib("owner", ext), "context"))
		_, err = d.Dispatch(bg, Request{Point: p, Payload: host})
		var ee *ExtensionError
		if !errors.As(err, &ee) || ee.Phase != "strategy" || ee.Extension != "owner" {
			t.Errorf("%s: err = %v, want fatal strategy error", name, err)
		}
	}
	// A block in the walk skips the strategy phase.
	skipped := &fake{}
	d, _ = build(t, contrib("w", answers(intercept.Block("stop")), p), withSlots(contrib("owner", skipped), "context"))
	res, _ = d.Dispatch(bg, Request{Point: p, Payload: host})
	if !res.Blocked || len(skipped.seenCalls()) != 0 {
		t.Errorf("walk block did not skip strategy: %+v calls=%v", res, skipped.seenCalls())
	}
	// An unowned slot changes nothing; tool:<name> rules only for its tool.
	toolOwner := answers(intercept.Block("ls is mine"))
	d, _ = build(t, withSlots(contrib("t", toolOwner), "tool:ls"))
	res, _ = d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: &intercept.ToolBeforePayload{Name: "cat"}})
	if res.Blocked || res.Changed {
		t.Errorf("tool:ls owner ruled on cat: %+v", res)
	}
	res, _ = d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: &intercept.ToolBeforePayload{Name: "ls"}})
	if !res.Blocked || res.BlockedBy != "t" {
		t.Errorf("tool:ls owner did not rule on ls: %+v", res)
	}
	// provider:<name>/<model> rules only when the dispatch names it.
	prov := answers(intercept.Block("provider owner"))
	d, _ = build(t, withSlots(contrib("pv", prov), "provider:openai/gpt-4o"))
	pr := &intercept.ProviderRequestPayload{Request: intercept.CompletionRequest{Messages: []intercept.Message{}, Tools: []intercept.ToolSchema{}}}
	if res, _ = d.Dispatch(bg, Request{Point: intercept.ProviderRequest, Payload: pr, Provider: "anthropic/claude"}); res.Blocked {
		t.Error("provider owner ruled on another provider")
	}
	if res, _ = d.Dispatch(bg, Request{Point: intercept.ProviderRequest, Payload: pr, Provider: "openai/gpt-4o"}); !res.Blocked {
		t.Error("provider owner did not rule on its provider")
	}
}

// D20: the broadcast.
func TestBroadcastD20(t *testing.T) {
	a := &fake{}
	b := answers(intercept.Block("stop"))
	owner := &fake{}
	sess := &fake{}
	other := &fake{}
	d, _ := build(t,
		contrib("a", a, intercept.ToolBefore),
		contrib("b", b, intercept.ToolBefore),
		withSlots(contrib("owner", owner, intercept.ToolBefore), "tool:ls", "session_policy"), // member and owner: once
		withSlots(contrib("sess", sess), "compaction", "tool:cat"),
		contrib("other", other, intercept.InputReceive))
	res, err := d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: &intercept.ToolBeforePayload{Name: "ls"}})
	if err != nil || !res.Blocked {
		t.Fatal(res, err)
	}
	d.Close()
	want := []string{`tool.before {"name":"ls"}`}
	for name, f := range map[string]*fake{"a": a, "b": b, "owner": owner} {
		if got := f.seenEvents(); !slices.Equal(got, want) {
			t.Errorf("%s events = %q, want %q (blocked walks still broadcast, once per extension)", name, got, want)
		}
	}
	if len(sess.seenEvents()) != 0 || len(other.seenEvents()) != 0 {
		t.Errorf("non-observers notified: %q %q", sess.seenEvents(), other.seenEvents())
	}
	if _, err := d.Dispatch(bg, Request{Point: intercept.ToolBefore, Payload: &intercept.ToolBeforePayload{Name: "ls"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// D20: a session_policy owner observes session.* events; a required-class
// failure sends no event; a full queue drops with one warning.
func TestBroadcastPolicyD20(t *testing.T) {
	// Conflicting session_policy claims are D18; use one owner.
	pol := &fake{}
	d, _ := build(t, withSlots(contrib("pol", pol), "session_policy"))
	d.Dispatch(bg, Request{Point: intercept.SessionSave, Payload: &intercept.SessionPayload{Phase: "save"}})
	d.Close()
	if got := pol.seenEvents(); !slices.Equal(got, []string{`session.save {"phase":"save"}`}) {
		t.Errorf("session_policy owner events = %q", got)
	}

	watcher := &fake{}
	d, _ = build(t, contrib("watch", watcher, intercept.InputReceive), required(contrib("r", failsWith(errors.New("x")), intercept.InputReceive)))
	if _, err := d.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{Text: "x"}}); err == nil {
		t.Fatal("want failure")
	}
	d.Close()
	if len(watcher.seenEvents()) != 0 {
		t.Error("event sent after a required-class failure")
	}

	release := make(chan struct{})
	slow := &fake{}
	blocker := intercept.Funcs{NotifyFunc: func(intercept.Point, json.RawMessage) error { <-release; return nil }}
	w := &warnings{}
	d, err := New([]Contribution{contrib("slow", blocker, intercept.InputReceive), contrib("s2", slow, intercept.InputReceive)},
		Options{OnWarning: w.add, QueueSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	drops := 0
	for range 10 { // never blocks, even with a stuck worker
		res, err := d.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{Text: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		drops += len(res.Warnings)
	}
	close(release)
	d.Close()
	ws := w.all()
	if len(ws) != 1 || ws[0].Kind != KindEventDrop || drops != 1 {
		t.Errorf("warnings = %+v (in results: %d), want one event_drop", ws, drops)
	}
}

// Trace: one event per call with phase walk, strategy or event; nothing
// when the recorder is nil.
func TestTraceD19D20(t *testing.T) {
	rec := trace.NewRecorder()
	d, _ := build(t, contrib("a", &fake{}, intercept.ContextPrepare), withSlots(contrib("o", &fake{}), "context"))
	if _, err := d.Dispatch(bg, Request{Point: intercept.ContextPrepare, Trace: rec,
		Payload: &intercept.ContextPayload{Messages: []intercept.Message{}}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rec.Events() {
		if e.Family != trace.FamilyDispatch || e.Hook != "context.prepare" {
			t.Errorf("bad event %+v", e)
		}
		got = append(got, e.Plugin+":"+e.Phase+":"+e.Action)
	}
	want := []string{"a:walk:continue", "o:strategy:continue", "a:event:notify", "o:event:notify"}
	if !slices.Equal(got, want) {
		t.Errorf("trace = %v, want %v", got, want)
	}
	if _, err := d.Dispatch(bg, Request{Point: intercept.ContextPrepare, Payload: &intercept.ContextPayload{Messages: []intercept.Message{}}}); err != nil {
		t.Fatal(err)
	}
	if len(rec.Events()) != 4 {
		t.Error("a dispatch without a recorder recorded events")
	}
}

// D3: the per-call context is pooled but keeps the context contract for an
// extension that selects on Done.
func TestCallContextD3(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(bg, ctxKey{}, "v"))
	ext := &fake{answer: func(ctx context.Context, _ intercept.Point, _ json.RawMessage) (intercept.Answer, error) {
		if ctx.Value(ctxKey{}) != "v" {
			return intercept.Answer{}, errors.New("value lost")
		}
		if ctx.Err() != nil {
			return intercept.Answer{}, errors.New("early error")
		}
		cancel()
		<-ctx.Done()
		return intercept.Continue(), nil
	}}
	d, _ := build(t, required(contrib("a", ext, intercept.InputReceive)))
	_, err := d.Dispatch(parent, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{Text: "x"}})
	var ee *ExtensionError
	if !errors.Is(err, context.Canceled) || errors.As(err, &ee) {
		t.Errorf("err = %v, want host cancellation", err)
	}
}

type ctxKey struct{}
