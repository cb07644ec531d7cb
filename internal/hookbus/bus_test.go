package hookbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/hooks"
)

var errBoom = errors.New("boom")

// trail appends label to the submit's "trail" metadata, so a test can read
// which hooks ran, in which order.
func trail(label string) hooks.SubmitFunc {
	return func(_ context.Context, s *hooks.Submit) error {
		s.SetMetadata("trail", s.Metadata["trail"]+label)
		return nil
	}
}

func submitHook(id string, order int, p hooks.Policy, fn hooks.SubmitFunc) hooks.SubmitHook {
	return hooks.NewSubmitHook(hooks.Spec{ID: id, Order: order, Policy: p}, fn)
}

func mustNew(t testing.TB, cfg Config) *Bus {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

func newSubmit() *hooks.Submit {
	return &hooks.Submit{
		Model:    "gpt-x",
		Messages: []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`)},
		Metadata: map[string]string{"tenant": "t1"},
	}
}

// H1: order ascending, ties by id, then registration order.
func TestOrderH1(t *testing.T) {
	type reg = orderReg
	tests := []orderCase{
		{"order ascending", []reg{{"a", 30, "3"}, {"b", 10, "1"}, {"c", 20, "2"}}, "123"},
		{"negative orders first", []reg{{"a", 0, "2"}, {"b", -5, "1"}, {"c", 7, "3"}}, "123"},
		{"ties broken by id", []reg{{"zeta", 1, "3"}, {"alpha", 1, "1"}, {"mid", 1, "2"}}, "123"},
		{"ties on order and id keep registration order", []reg{{"x", 1, "1"}, {"x", 1, "2"}, {"a", 2, "4"}, {"x", 1, "3"}}, "1234"},
		{"id compares bytewise", []reg{{"b", 0, "3"}, {"B", 0, "1"}, {"a", 0, "2"}}, "123"},
		manyTies(),
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg Config
			for _, r := range tt.regs {
				cfg.Submit = append(cfg.Submit, submitHook(r.id, r.order, hooks.PolicyFailClosed, trail(r.label)))
				l := r.label
				cfg.Tools = append(cfg.Tools, hooks.NewToolReactor(hooks.Spec{ID: r.id, Order: r.order},
					func(_ context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
						return hooks.Rewrite(map[string]json.RawMessage{"name": json.RawMessage(`"` + ev.Name + l + `"`)}), nil
					}))
				cfg.Parts = append(cfg.Parts, hooks.NewPartHook(hooks.Spec{ID: r.id, Order: r.order, Kind: hooks.KindResponsePart},
					func(_ context.Context, p hooks.Part) (hooks.Part, error) { p.Type += l; return p, nil }))
			}
			b := mustNew(t, cfg)
			for run := 0; run < 3; run++ { // stable across runs
				res, err := b.RunSubmit(context.Background(), newSubmit())
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Submit.Metadata["trail"]; got != tt.want {
					t.Fatalf("submit order = %q, want %q", got, tt.want)
				}
				tr, err := b.RunTool(context.Background(), hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "c", Name: "t"})
				if err != nil {
					t.Fatal(err)
				}
				if tr.Event.Name != "t"+tt.want {
					t.Fatalf("tool order = %q, want %q", tr.Event.Name, "t"+tt.want)
				}
				pr, err := b.RunResponsePart(context.Background(), hooks.Part{Type: "p"})
				if err != nil {
					t.Fatal(err)
				}
				if pr.Part.Type != "p"+tt.want {
					t.Fatalf("part order = %q, want %q", pr.Part.Type, "p"+tt.want)
				}
			}
		})
	}
}

type orderReg struct {
	id    string
	order int
	label string
}

type orderCase struct {
	name string
	regs []orderReg
	want string
}

// manyTies registers more hooks than a sort handles by insertion, so an
// unstable sort would show: 40 hooks share order and id, interleaved with
// hooks that sort before and after them.
func manyTies() orderCase {
	tc := orderCase{name: "many ties keep registration order"}
	var tied, before, after string
	for i := 0; i < 40; i++ {
		l := fmt.Sprintf("<%02d>", i)
		tc.regs = append(tc.regs, orderReg{"same", 5, l})
		tied += l
		if i%7 == 0 {
			b, a := fmt.Sprintf("[b%02d]", i), fmt.Sprintf("[a%02d]", i)
			tc.regs = append(tc.regs, orderReg{"same", 4, b}, orderReg{"samf", 5, a})
			before += b
			after += a
		}
	}
	tc.want = before + tied + after
	return tc
}

// changingSpec returns a different order on every Spec call, so the test
// sees whether the bus reads specs more than once.
type changingSpec struct {
	id    string
	calls atomic.Int32
}

func (h *changingSpec) Spec() hooks.Spec {
	n := h.calls.Add(1)
	return hooks.Spec{ID: h.id, Order: -int(n) * 100, Kind: hooks.KindSubmit}
}

func (h *changingSpec) OnSubmit(_ context.Context, s *hooks.Submit) error {
	return trail(h.id)(context.Background(), s)
}

// H1: the order is computed once, at build; a hook whose Spec changes later
// does not move.
func TestOrderComputedOnceH1(t *testing.T) {
	x := &changingSpec{id: "X"}
	b := mustNew(t, Config{Submit: []hooks.SubmitHook{
		submitHook("A", -150, hooks.PolicyFailClosed, trail("A")),
		x,
	}})
	// At build X had order -100, so A (-150) runs first; later Spec calls
	// would say -200, -300, ...
	for i := 0; i < 3; i++ {
		res, err := b.RunSubmit(context.Background(), newSubmit())
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Submit.Metadata["trail"]; got != "AX" {
			t.Fatalf("run %d: order %q, want AX", i, got)
		}
	}
	if n := x.calls.Load(); n != 1 {
		t.Fatalf("Spec called %d times, want 1", n)
	}
	want := []hooks.Spec{{ID: "A", Order: -150, Policy: hooks.PolicyFailClosed, Kind: hooks.KindSubmit}, {ID: "X", Order: -100, Kind: hooks.KindSubmit}}
	if got := b.Chain(hooks.KindSubmit); !reflect.DeepEqual(got, want) {
		t.Fatalf("Chain = %+v, want %+v", got, want)
	}
}

// H2: a failing fail-open hook's error is recorded and the next hook sees
// the value as it was before it, even when it changed the value in place
// first.
func TestFailOpenH2(t *testing.T) {
	mutateThenFail := func(fail func() error) hooks.SubmitFunc {
		return func(_ context.Context, s *hooks.Submit) error {
			s.Model = "leaked"
			s.Metadata["tenant"] = "leaked"
			s.SetMetadata("extra", "leaked")
			s.Messages[0][2] = 'X' // in place, inside the bytes
			s.Messages = append(s.Messages, json.RawMessage(`"leaked"`))
			return fail()
		}
	}
	tests := []struct {
		name    string
		hook    hooks.SubmitFunc
		wantErr func(error) bool
	}{
		{"error", mutateThenFail(func() error { return errBoom }), func(err error) bool { return errors.Is(err, errBoom) }},
		{"panic", mutateThenFail(func() error { panic("kaput") }), func(err error) bool {
			var pe *PanicError
			return errors.As(err, &pe) && pe.Value == "kaput"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen *hooks.Submit
			rec := trace.NewRecorder()
			b := mustNew(t, Config{Recorder: rec, Submit: []hooks.SubmitHook{
				submitHook("before", 1, hooks.PolicyFailOpen, trail("b")),
				submitHook("bad", 2, hooks.PolicyFailOpen, tt.hook),
				submitHook("after", 3, hooks.PolicyFailClosed, func(_ context.Context, s *hooks.Submit) error {
					seen = s.Clone()
					return trail("a")(context.Background(), s)
				}),
			}})
			in := newSubmit()
			res, err := b.RunSubmit(context.Background(), in)
			if err != nil {
				t.Fatalf("RunSubmit: %v", err)
			}
			want := newSubmit()
			want.Metadata["trail"] = "b"
			if !reflect.DeepEqual(seen, want) {
				t.Fatalf("next hook saw %+v\nwant %+v (the value before the failing hook)", seen, want)
			}
			want.Metadata["trail"] = "ba"
			if !reflect.DeepEqual(res.Submit, want) {
				t.Fatalf("final %+v, want %+v", res.Submit, want)
			}
			if !reflect.DeepEqual(in, newSubmit()) {
				t.Fatalf("caller's submit modified: %+v", in)
			}
			if len(res.Errors) != 1 {
				t.Fatalf("Errors = %v, want one", res.Errors)
			}
			var he *HookError
			if !errors.As(res.Errors[0], &he) || he.Hook != "bad" || he.Policy != hooks.PolicyFailOpen || !tt.wantErr(res.Errors[0]) {
				t.Fatalf("recorded error %v is not the bad hook's", res.Errors[0])
			}
			evs := rec.Events()
			if len(evs) != 3 || evs[1].Action != ActionError || evs[1].Plugin != "bad" || evs[1].Reason != "fail-open" || evs[1].Error == "" {
				t.Fatalf("trace = %+v", evs)
			}
		})
	}
}

// H2: the same for part hooks, whose bytes a failing hook changed in place.
func TestFailOpenPartH2(t *testing.T) {
	var seen string
	b := mustNew(t, Config{Parts: []hooks.PartHook{
		hooks.NewPartHook(hooks.Spec{ID: "bad", Order: 1, Policy: hooks.PolicyFailOpen, Kind: hooks.KindRequestPart},
			func(_ context.Context, p hooks.Part) (hooks.Part, error) {
				copy(p.Data, "XXXX")
				return p, errBoom
			}),
		hooks.NewPartHook(hooks.Spec{ID: "upper", Order: 2, Policy: hooks.PolicyFailOpen, Kind: hooks.KindRequestPart},
			func(_ context.Context, p hooks.Part) (hooks.Part, error) {
				seen = string(p.Data)
				p.Data = json.RawMessage(strings.ToUpper(string(p.Data)))
				return p, nil
			}),
	}})
	in := hooks.Part{Index: 2, Type: "text", Data: json.RawMessage(`"hello"`)}
	res, err := b.RunRequestPart(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if seen != `"hello"` {
		t.Fatalf("next hook saw %s, want the value before the failing hook", seen)
	}
	if string(res.Part.Data) != `"HELLO"` || res.Part.Index != 2 || len(res.Errors) != 1 {
		t.Fatalf("result %+v", res)
	}
	if string(in.Data) != `"hello"` {
		t.Fatalf("caller's bytes modified: %s", in.Data)
	}
	// A response part run does not see request part hooks.
	rr, err := b.RunResponsePart(context.Background(), in)
	if err != nil || string(rr.Part.Data) != `"hello"` {
		t.Fatalf("response run = %+v, %v", rr, err)
	}
}

// H3: fail-closed and unspecified policies stop the chain on an error or a
// panic; the error names the hook and carries the cause; a panic under
// fail-open is recorded and the chain goes on.
func TestFailClosedAndPanicH3(t *testing.T) {
	failing := map[string]hooks.SubmitFunc{
		"error": func(_ context.Context, s *hooks.Submit) error { s.Model = "leaked"; return errBoom },
		"panic": func(_ context.Context, s *hooks.Submit) error { s.Model = "leaked"; panic(errBoom) },
	}
	tests := []struct {
		policy   hooks.Policy
		fn       string
		wantStop bool
		wantPol  hooks.Policy
	}{
		{hooks.PolicyFailClosed, "error", true, hooks.PolicyFailClosed},
		{hooks.PolicyFailClosed, "panic", true, hooks.PolicyFailClosed},
		{hooks.PolicyUnspecified, "error", true, hooks.PolicyFailClosed},
		{hooks.PolicyUnspecified, "panic", true, hooks.PolicyFailClosed},
		{hooks.PolicyFailOpen, "panic", false, hooks.PolicyFailOpen},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%s", tt.policy, tt.fn), func(t *testing.T) {
			afterRan := false
			b := mustNew(t, Config{Submit: []hooks.SubmitHook{
				submitHook("first", 0, hooks.PolicyFailClosed, trail("1")),
				submitHook("failing", 1, tt.policy, failing[tt.fn]),
				submitHook("after", 2, hooks.PolicyFailOpen, func(context.Context, *hooks.Submit) error { afterRan = true; return nil }),
			}})
			in := newSubmit()
			res, err := b.RunSubmit(context.Background(), in)
			var he *HookError
			herr := err
			if !tt.wantStop {
				if err != nil || len(res.Errors) != 1 {
					t.Fatalf("fail-open panic: err %v, recorded %v", err, res.Errors)
				}
				herr = res.Errors[0]
			} else if res.Submit != nil {
				t.Fatalf("a failed run returned a submit: %+v", res.Submit)
			}
			if !errors.As(herr, &he) || he.Hook != "failing" || he.Policy != tt.wantPol || he.Kind != hooks.KindSubmit {
				t.Fatalf("error %v: want a HookError for hook failing with policy %s", herr, tt.wantPol)
			}
			if !errors.Is(herr, errBoom) && tt.fn == "error" {
				t.Fatalf("error %v does not wrap the hook's error", herr)
			}
			if tt.fn == "panic" {
				var pe *PanicError
				if !errors.As(herr, &pe) || pe.Value != errBoom || len(pe.Stack) == 0 {
					t.Fatalf("error %v does not carry the panic value", herr)
				}
			}
			if !strings.Contains(herr.Error(), `"failing"`) {
				t.Fatalf("error text %q does not name the hook", herr)
			}
			if _, ok := hooks.IsReject(herr); ok {
				t.Fatal("a failure is recognised as a rejection")
			}
			if afterRan == tt.wantStop {
				t.Fatalf("later hook ran = %v, want %v", afterRan, !tt.wantStop)
			}
			if !tt.wantStop && res.Submit.Model != "gpt-x" {
				t.Fatalf("fail-open panic leaked a change: %q", res.Submit.Model)
			}
			if in.Model != "gpt-x" {
				t.Fatal("caller's submit modified")
			}
		})
	}
}

// H3 for part hooks: unspecified is fail-closed.
func TestPartUnspecifiedIsFailClosedH3(t *testing.T) {
	ran := false
	b := mustNew(t, Config{Parts: []hooks.PartHook{
		hooks.NewPartHook(hooks.Spec{ID: "p1", Kind: hooks.KindResponsePart},
			func(context.Context, hooks.Part) (hooks.Part, error) { panic("bad frame") }),
		hooks.NewPartHook(hooks.Spec{ID: "p2", Order: 1, Policy: hooks.PolicyFailOpen, Kind: hooks.KindResponsePart},
			func(_ context.Context, p hooks.Part) (hooks.Part, error) { ran = true; return p, nil }),
	}})
	_, err := b.RunPart(context.Background(), hooks.KindResponsePart, hooks.Part{Type: "delta"})
	var he *HookError
	if !errors.As(err, &he) || he.Hook != "p1" || he.Policy != hooks.PolicyFailClosed || ran {
		t.Fatalf("err = %v, later ran = %v", err, ran)
	}
	if _, err := b.RunPart(context.Background(), hooks.KindTool, hooks.Part{}); err == nil {
		t.Fatal("RunPart accepted a tool kind")
	}
}

// H4: a rejection stops the chain under every policy and reaches the caller
// as a RejectError carrying the hook and reason, never as a HookError.
func TestSubmitRejectH4(t *testing.T) {
	tests := []struct {
		name   string
		policy hooks.Policy
		ret    error
	}{
		{"fail-open", hooks.PolicyFailOpen, hooks.Reject("model not allowed")},
		{"fail-closed", hooks.PolicyFailClosed, hooks.Reject("model not allowed")},
		{"unspecified", hooks.PolicyUnspecified, hooks.Reject("model not allowed")},
		{"wrapped by the hook", hooks.PolicyFailOpen, fmt.Errorf("policy check: %w", hooks.Reject("model not allowed"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			afterRan := false
			rec := trace.NewRecorder()
			b := mustNew(t, Config{Recorder: rec, Submit: []hooks.SubmitHook{
				submitHook("gate", 1, tt.policy, func(context.Context, *hooks.Submit) error { return tt.ret }),
				submitHook("after", 2, hooks.PolicyFailOpen, func(context.Context, *hooks.Submit) error { afterRan = true; return nil }),
			}})
			res, err := b.RunSubmit(context.Background(), newSubmit())
			var re *hooks.RejectError
			if !errors.As(err, &re) || re.Reason != "model not allowed" || re.Hook != "gate" {
				t.Fatalf("err = %v, want a RejectError from gate", err)
			}
			if reason, ok := hooks.IsReject(err); !ok || reason != "model not allowed" {
				t.Fatalf("IsReject = %q, %v", reason, ok)
			}
			var he *HookError
			if errors.As(err, &he) {
				t.Fatal("a rejection is also a HookError")
			}
			if afterRan || res.Submit != nil || len(res.Errors) != 0 {
				t.Fatalf("after ran %v, result %+v", afterRan, res)
			}
			if evs := rec.Events(); len(evs) != 1 || evs[0].Action != ActionReject || evs[0].Reason != "model not allowed" {
				t.Fatalf("trace %+v", evs)
			}
		})
	}
}

// H3/H4: a panic is a failure, even when its value is a rejection; a part
// hook cannot reject, its RejectError is a failure under its policy.
func TestRejectOnlyByReturnH4(t *testing.T) {
	b := mustNew(t, Config{
		Submit: []hooks.SubmitHook{submitHook("p", 0, hooks.PolicyFailClosed, func(context.Context, *hooks.Submit) error {
			panic(&hooks.RejectError{Reason: "via panic"})
		})},
		Parts: []hooks.PartHook{hooks.NewPartHook(hooks.Spec{ID: "part", Policy: hooks.PolicyFailOpen, Kind: hooks.KindRequestPart},
			func(context.Context, hooks.Part) (hooks.Part, error) { return hooks.Part{}, hooks.Reject("no") })},
	})
	_, err := b.RunSubmit(context.Background(), newSubmit())
	var he *HookError
	if _, ok := hooks.IsReject(err); ok || !errors.As(err, &he) {
		t.Fatalf("panic with a RejectError value: err = %v, want a HookError", err)
	}
	res, err := b.RunRequestPart(context.Background(), hooks.Part{Type: "t"})
	if err != nil || len(res.Errors) != 1 || res.Part.Type != "t" {
		t.Fatalf("part reject under fail-open: %+v, %v", res, err)
	}
}

// A context that ends stops the chain before the next hook, blaming none.
func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	b := mustNew(t, Config{Submit: []hooks.SubmitHook{
		submitHook("cancel", 0, hooks.PolicyFailClosed, func(context.Context, *hooks.Submit) error { cancel(); return nil }),
		submitHook("next", 1, hooks.PolicyFailClosed, func(context.Context, *hooks.Submit) error { ran = true; return nil }),
	}})
	_, err := b.RunSubmit(ctx, newSubmit())
	var he *HookError
	if !errors.Is(err, context.Canceled) || errors.As(err, &he) || ran || !strings.Contains(err.Error(), `"next"`) {
		t.Fatalf("err = %v, next ran %v", err, ran)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	var nilPtr *changingSpec
	_, err := New(Config{
		ToolPolicy: "drop",
		Submit: []hooks.SubmitHook{
			nil,
			nilPtr,
			submitHook("", 0, "", trail("x")),
			hooks.NewSubmitHook(hooks.Spec{ID: "k", Kind: hooks.KindTool}, trail("x")),
		},
		Parts: []hooks.PartHook{hooks.NewPartHook(hooks.Spec{ID: "nokind"}, nil)},
		Tools: []hooks.ToolReactor{hooks.NewToolReactor(hooks.Spec{ID: "t", Policy: hooks.PolicySwallow}, nil)},
	})
	if err == nil {
		t.Fatal("New accepted a bad config")
	}
	for _, want := range []string{
		`unknown tool policy "drop"`,
		"submit hook #0 is nil",
		"submit hook #1: Spec() panicked",
		"submit hook #2",
		`submit hook #3 (id "k") declares kind "tool"`,
		`part hook #0 (id "nokind")`,
		`tool hook #0 (id "t"): policy "swallow" is a bus-level tool policy`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// Trace events follow the calls: family H, kind, hook ID, decision; a nil
// recorder records nothing (and the bus runs the same).
func TestTrace(t *testing.T) {
	rec := trace.NewRecorder()
	cfg := Config{
		Recorder: rec,
		Tools: []hooks.ToolReactor{
			hooks.NewToolReactor(hooks.Spec{ID: "p"}, func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) { return hooks.Pass(), nil }),
			hooks.NewToolReactor(hooks.Spec{ID: "e", Order: 1}, func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) {
				return hooks.ToolDecision{}, errBoom
			}),
			hooks.NewToolReactor(hooks.Spec{ID: "s", Order: 2}, func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) {
				return hooks.Swallow("secret tool"), nil
			}),
		},
	}
	b := mustNew(t, cfg)
	ev := hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "c", Name: "n"}
	if _, err := b.RunTool(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	got := trace.WithoutDurations(rec.Events())
	want := []trace.Event{
		{Seq: 1, Family: trace.FamilyHooks, Hook: "tool", Plugin: "p", Action: "pass"},
		{Seq: 2, Family: trace.FamilyHooks, Hook: "tool", Plugin: "e", Action: "error", Reason: "fail-open", Error: `boom`},
		{Seq: 3, Family: trace.FamilyHooks, Hook: "tool", Plugin: "s", Action: "swallow", Reason: "secret tool"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("trace\n%+v\nwant\n%+v", got, want)
	}
	// Per-run recorder on a shared bus.
	rec2 := trace.NewRecorder()
	if _, err := b.WithRecorder(rec2).RunTool(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if len(rec2.Events()) != 3 || len(rec.Events()) != 3 {
		t.Fatalf("WithRecorder: %d / %d events", len(rec2.Events()), len(rec.Events()))
	}
	cfg.Recorder = nil
	res, err := mustNew(t, cfg).RunTool(context.Background(), ev)
	if err != nil || !res.Swallowed || res.SwallowedBy != "s" {
		t.Fatalf("nil recorder run: %+v, %v", res, err)
	}
}
