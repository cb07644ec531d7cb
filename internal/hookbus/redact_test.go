package hookbus

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/hooks"
)

// D16 applied to the shared trace (docs/contracts.md, "Trace text"): a
// reason or error that quotes a credential is redacted in the H trace.
func TestTraceRedactedH4D16(t *testing.T) {
	const key = "sk-proj-ABCDEFGHIJKLMNOP1234"
	rec := trace.NewRecorder()
	b := mustNew(t, Config{Recorder: rec, Submit: []hooks.SubmitHook{
		submitHook("leaky", 1, hooks.PolicyFailOpen, func(context.Context, *hooks.Submit) error {
			return errors.New("upstream said no to " + key)
		}),
		submitHook("guard", 2, hooks.PolicyFailClosed, func(context.Context, *hooks.Submit) error {
			return &hooks.RejectError{Reason: "found " + key}
		}),
	}})
	_, err := b.RunSubmit(context.Background(), newSubmit())
	if _, ok := hooks.IsReject(err); !ok {
		t.Fatalf("want a rejection, got %v", err)
	}
	ev := rec.Events()
	if len(ev) != 2 {
		t.Fatalf("got %d events", len(ev))
	}
	for _, e := range ev {
		if strings.Contains(e.Reason+e.Error, key) {
			t.Errorf("trace event of %q leaks the key: reason %q error %q", e.Plugin, e.Reason, e.Error)
		}
	}
	if !strings.Contains(ev[1].Reason, "[REDACTED:") {
		t.Errorf("reject reason %q has no redaction marker", ev[1].Reason)
	}
}
