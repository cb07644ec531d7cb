package hookbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/abkit/abkit/sdk/hooks"
)

func startEvent() hooks.ToolEvent {
	return hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "call-1", Name: "search", Arguments: json.RawMessage(`{"q":"cats"}`)}
}

func reactor(id string, order int, p hooks.Policy, fn hooks.ToolFunc) hooks.ToolReactor {
	return hooks.NewToolReactor(hooks.Spec{ID: id, Order: order, Policy: p}, fn)
}

func decide(d hooks.ToolDecision) hooks.ToolFunc {
	return func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) { return d, nil }
}

// observer records the event it saw and passes.
type observer struct{ seen []hooks.ToolEvent }

func (o *observer) fn(_ context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
	o.seen = append(o.seen, ev)
	return hooks.Pass(), nil
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// H5: each decision and what the next reactor sees.
func TestToolDecisionsH5(t *testing.T) {
	replacement := hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "call-1", Name: "safe_search", Arguments: raw(`{"q":"cats","safe":true}`)}
	tests := []struct {
		name          string
		reactor       hooks.ToolFunc
		want          hooks.ToolEvent
		wantSwallowed bool
	}{
		{"pass", decide(hooks.Pass()), startEvent(), false},
		{"zero decision is pass", decide(hooks.ToolDecision{}), startEvent(), false},
		{"rewrite changes only the named fields",
			decide(hooks.Rewrite(map[string]json.RawMessage{"arguments": raw(`{"q":"dogs"}`)})),
			hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "call-1", Name: "search", Arguments: raw(`{"q":"dogs"}`)}, false},
		{"rewrite with null clears arguments",
			decide(hooks.Rewrite(map[string]json.RawMessage{"arguments": raw(`null`)})),
			hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "call-1", Name: "search"}, false},
		{"replace substitutes the whole event", decide(hooks.Replace(replacement)), replacement, false},
		{"replace omits fields: they do not leak through",
			decide(hooks.Replace(hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "x", Name: "y"})),
			hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "x", Name: "y"}, false},
		{"swallow", decide(hooks.Swallow("hidden")), startEvent(), true},
		{"in-place change of the reactor's copy does not leak through pass",
			func(_ context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
				copy(ev.Arguments, `{"q":"XXXX"}`)
				return hooks.Pass(), nil
			}, startEvent(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			later := &observer{}
			b := mustNew(t, Config{Tools: []hooks.ToolReactor{
				reactor("r", 1, "", tt.reactor),
				reactor("later", 2, "", later.fn),
			}})
			in := startEvent()
			res, err := b.RunTool(context.Background(), in)
			if err != nil {
				t.Fatalf("RunTool: %v", err)
			}
			if !reflect.DeepEqual(in, startEvent()) {
				t.Fatalf("caller's event modified: %+v", in)
			}
			if res.Swallowed != tt.wantSwallowed || len(res.Errors) != 0 {
				t.Fatalf("result %+v", res)
			}
			if tt.wantSwallowed {
				// H5: no later reactor runs.
				if len(later.seen) != 0 || res.SwallowedBy != "r" || res.SwallowCause != nil {
					t.Fatalf("swallow: later saw %v, result %+v", later.seen, res)
				}
				return
			}
			if len(later.seen) != 1 || !reflect.DeepEqual(later.seen[0], tt.want) {
				t.Fatalf("next reactor saw %+v, want %+v", later.seen, tt.want)
			}
			if !reflect.DeepEqual(res.Event, tt.want) {
				t.Fatalf("final %+v, want %+v", res.Event, tt.want)
			}
		})
	}
}

// H5, H6: an invalid rewrite or replace, an unknown decision, a reactor error
// and a reactor panic, under each bus policy.
func TestToolFailuresUnderBusPolicyH5H6(t *testing.T) {
	bad := []struct {
		name    string
		fn      hooks.ToolFunc
		invalid bool // the failure is an invalid decision (ErrInvalidDecision)
	}{
		{"rewrite unknown field", decide(hooks.Rewrite(map[string]json.RawMessage{"colour": raw(`"red"`)})), true},
		{"rewrite wrong type", decide(hooks.Rewrite(map[string]json.RawMessage{"is_error": raw(`"yes"`)})), true},
		{"rewrite to invalid event", decide(hooks.Rewrite(map[string]json.RawMessage{"name": raw(`""`)})), true},
		{"rewrite arguments to an array", decide(hooks.Rewrite(map[string]json.RawMessage{"arguments": raw(`[1,2]`)})), true},
		{"replace without event", decide(hooks.ToolDecision{Kind: hooks.DecisionReplace}), true},
		{"replace with invalid event", decide(hooks.Replace(hooks.ToolEvent{Phase: hooks.PhaseStart, Name: "x"})), true},
		{"unknown decision", decide(hooks.ToolDecision{Kind: "block"}), true},
		{"reactor error", func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) {
			return hooks.Pass(), errBoom
		}, false},
		{"reactor panic", func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) { panic("oops") }, false},
	}
	policies := []struct {
		bus  hooks.Policy
		want string // continue, stop, swallow
	}{
		{hooks.PolicyUnspecified, "continue"}, // H6: fail-open is the default
		{hooks.PolicyFailOpen, "continue"},
		{hooks.PolicyFailClosed, "stop"},
		{hooks.PolicySwallow, "swallow"},
	}
	// A valid rewrite before the failing reactor: the current event the
	// policy keeps is this one, not the caller's.
	first := decide(hooks.Rewrite(map[string]json.RawMessage{"name": raw(`"search_v2"`)}))
	current := startEvent()
	current.Name = "search_v2"
	for _, pol := range policies {
		for _, tt := range bad {
			t.Run(fmt.Sprintf("%q/%s", pol.bus, tt.name), func(t *testing.T) {
				later := &observer{}
				b := mustNew(t, Config{ToolPolicy: pol.bus, Tools: []hooks.ToolReactor{
					reactor("first", 0, "", first),
					reactor("bad", 1, "", tt.fn),
					reactor("later", 2, "", later.fn),
				}})
				res, err := b.RunTool(context.Background(), startEvent())
				var failure error
				switch pol.want {
				case "continue":
					if err != nil || res.Swallowed || len(res.Errors) != 1 {
						t.Fatalf("fail-open: %+v, %v", res, err)
					}
					if len(later.seen) != 1 || !reflect.DeepEqual(later.seen[0], current) || !reflect.DeepEqual(res.Event, current) {
						t.Fatalf("fail-open must keep the current event: later saw %+v, final %+v", later.seen, res.Event)
					}
					failure = res.Errors[0]
				case "stop":
					if err == nil || res.Swallowed || len(later.seen) != 0 {
						t.Fatalf("fail-closed: %+v, %v, later saw %v", res, err, later.seen)
					}
					failure = err
				case "swallow":
					if err != nil || !res.Swallowed || res.SwallowedBy != "bad" || res.SwallowCause == nil || len(later.seen) != 0 {
						t.Fatalf("swallow: %+v, %v, later saw %v", res, err, later.seen)
					}
					failure = res.SwallowCause
				}
				var he *HookError
				if !errors.As(failure, &he) || he.Hook != "bad" || he.Kind != hooks.KindTool || he.Policy != b.ToolPolicy() {
					t.Fatalf("failure %v: want a HookError for bad under %s", failure, b.ToolPolicy())
				}
				if got := errors.Is(failure, ErrInvalidDecision); got != tt.invalid {
					t.Fatalf("errors.Is(ErrInvalidDecision) = %v, want %v (%v)", got, tt.invalid, failure)
				}
			})
		}
	}
}

// H6: how a reactor's own policy meets the bus policy: fail-closed on the
// reactor always stops; fail-open on the reactor cannot loosen the bus.
func TestToolPerHookPolicyH6(t *testing.T) {
	fail := func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) { return hooks.Pass(), errBoom }
	tests := []struct {
		bus, hook hooks.Policy
		wantStop  bool
		wantSwal  bool
	}{
		{hooks.PolicyFailOpen, hooks.PolicyFailClosed, true, false},
		{hooks.PolicySwallow, hooks.PolicyFailClosed, true, false},
		{hooks.PolicyFailClosed, hooks.PolicyFailOpen, true, false},
		{hooks.PolicySwallow, hooks.PolicyFailOpen, false, true},
		{hooks.PolicyFailOpen, hooks.PolicyFailOpen, false, false},
		{hooks.PolicyFailOpen, hooks.PolicyUnspecified, false, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("bus %s, hook %q", tt.bus, tt.hook), func(t *testing.T) {
			b := mustNew(t, Config{ToolPolicy: tt.bus, Tools: []hooks.ToolReactor{reactor("r", 0, tt.hook, fail)}})
			res, err := b.RunTool(context.Background(), startEvent())
			if (err != nil) != tt.wantStop || res.Swallowed != tt.wantSwal {
				t.Fatalf("err %v, swallowed %v; want stop %v, swallow %v", err, res.Swallowed, tt.wantStop, tt.wantSwal)
			}
			if tt.wantStop && !errors.Is(err, errBoom) {
				t.Fatalf("err %v does not wrap the reactor's error", err)
			}
		})
	}
}

// H5: the bus validates the event it is given; an invalid one blames no
// reactor and none runs.
func TestToolInvalidInputH5(t *testing.T) {
	o := &observer{}
	b := mustNew(t, Config{Tools: []hooks.ToolReactor{reactor("o", 0, "", o.fn)}})
	ev := startEvent()
	ev.CallID = ""
	_, err := b.RunTool(context.Background(), ev)
	var he *HookError
	if err == nil || errors.As(err, &he) || len(o.seen) != 0 {
		t.Fatalf("err %v, reactor saw %v", err, o.seen)
	}
}

// H5: after a rewrite into the result phase, the next reactor sees the
// validated rewritten event; a later rewrite that breaks the phase rules is
// refused and the valid one stands.
func TestToolValidatedBetweenReactorsH5(t *testing.T) {
	o := &observer{}
	b := mustNew(t, Config{Tools: []hooks.ToolReactor{
		reactor("to-result", 0, "", decide(hooks.Rewrite(map[string]json.RawMessage{
			"phase": raw(`"result"`), "result": raw(`{"hits":3}`), "is_error": raw(`false`),
		}))),
		reactor("check", 1, "", o.fn),
		reactor("back-to-start", 2, "", decide(hooks.Rewrite(map[string]json.RawMessage{"phase": raw(`"start"`)}))),
	}})
	res, err := b.RunTool(context.Background(), startEvent())
	if err != nil {
		t.Fatal(err)
	}
	want := startEvent()
	want.Phase, want.Result = hooks.PhaseResult, raw(`{"hits":3}`)
	if len(o.seen) != 1 || !reflect.DeepEqual(o.seen[0], want) || !reflect.DeepEqual(res.Event, want) {
		t.Fatalf("seen %+v, final %+v, want %+v", o.seen, res.Event, want)
	}
	if len(res.Errors) != 1 || !errors.Is(res.Errors[0], ErrInvalidDecision) {
		t.Fatalf("errors %v: want the invalid back-to-start rewrite", res.Errors)
	}
}
