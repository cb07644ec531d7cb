package hookbus

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/abkit/abkit/sdk/hooks"
)

// H2 (choice H2.rollback): by default the hook after a failed fail-open
// hook sees the value from before it; with KeepFailed it sees what the
// failed hook changed, and the error is recorded either way.
func TestKeepFailedH2(t *testing.T) {
	changeThenFail := hooks.NewSubmitHook(hooks.Spec{ID: "a", Policy: hooks.PolicyFailOpen, Kind: hooks.KindSubmit},
		func(_ context.Context, s *hooks.Submit) error { s.Model = "changed"; return errors.New("broke") })
	for keep, want := range map[bool]string{false: "m", true: "changed"} {
		var saw string
		next := hooks.NewSubmitHook(hooks.Spec{ID: "b", Order: 1, Kind: hooks.KindSubmit},
			func(_ context.Context, s *hooks.Submit) error { saw = s.Model; return nil })
		b, err := New(Config{Submit: []hooks.SubmitHook{changeThenFail, next}, KeepFailed: keep})
		if err != nil {
			t.Fatal(err)
		}
		in := &hooks.Submit{Model: "m"}
		res, err := b.RunSubmit(context.Background(), in)
		if err != nil || len(res.Errors) != 1 || saw != want || res.Submit.Model != want || in.Model != "m" {
			t.Errorf("KeepFailed=%v: b saw %q, result %q, errors %v, err %v, caller's value %q; want %q and the caller's value untouched",
				keep, saw, res.Submit.Model, res.Errors, err, in.Model, want)
		}
	}
}

// H6 (choice H6.invalid): an invalid rewrite goes through the bus policy
// (fail-closed stops); with IgnoreInvalid it is ignored and the chain goes
// on with the current event.
func TestIgnoreInvalidH6(t *testing.T) {
	bad := hooks.NewToolReactor(hooks.Spec{ID: "bad"}, func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) {
		return hooks.Rewrite(map[string]json.RawMessage{"nope": json.RawMessage("1")}), nil
	})
	ev := hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "c", Name: "t"}
	for ignore, wantErr := range map[bool]bool{false: true, true: false} {
		calls := 0
		next := hooks.NewToolReactor(hooks.Spec{ID: "next", Order: 1}, func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) {
			calls++
			return hooks.ToolDecision{}, nil
		})
		b, err := New(Config{Tools: []hooks.ToolReactor{bad, next}, ToolPolicy: hooks.PolicyFailClosed, IgnoreInvalid: ignore})
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.RunTool(context.Background(), ev)
		if (err != nil) != wantErr || (calls == 1) == wantErr || res.Event.Name != "t" {
			t.Errorf("IgnoreInvalid=%v: err %v, next called %d times, event %+v", ignore, err, calls, res.Event)
		}
	}
}
