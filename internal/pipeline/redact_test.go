package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// D16 applied to the shared trace (docs/contracts.md, "Trace text"): a
// rejection reason or a finisher error that quotes a credential is redacted
// in the P trace. The client still gets the plugin's own reason (P15).
func TestTraceRedactedP15P30(t *testing.T) {
	const key = "sk-proj-ABCDEFGHIJKLMNOP1234"
	log := &recLog{}
	a := &fake{name: "a", log: log, finish: true, fin: func(context.Context, *gateway.Exchange) error {
		return errors.New("audit sink refused " + key)
	}}
	b := &fake{name: "b", log: log, req: reject(403, "secret "+key)}
	c := buildFakes(t, Options{}, a, b)
	rec := trace.NewRecorder()
	res := c.Run(context.Background(), req(), jsonUp("x"), ExchangeOptions{Trace: rec})
	if res.Outcome.Kind != gateway.OutcomeDeny || res.Outcome.Reason != "secret "+key {
		t.Fatalf("outcome %+v: the plugin's reason must reach the outcome unchanged", res.Outcome)
	}
	var reasons []string
	for _, e := range rec.Events() {
		reasons = append(reasons, e.Reason, e.Error)
		if strings.Contains(e.Reason+e.Error, key) {
			t.Errorf("%s event of %q leaks the key: reason %q error %q", e.Hook, e.Plugin, e.Reason, e.Error)
		}
	}
	if !strings.Contains(strings.Join(reasons, " "), "[REDACTED:openai_key]") {
		t.Errorf("no redaction marker in %q", reasons)
	}
}
