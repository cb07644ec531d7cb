package hookbus

import (
	"context"
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
