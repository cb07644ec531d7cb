package pluginhost_test

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
)

// count asks the leaky helper how many exchanges' state it holds.
func count(t *testing.T, p *pluginhost.Plugin) int {
	t.Helper()
	sub, _, _ := p.Hooks()
	s := &hooks.Submit{}
	if err := sub[0].OnSubmit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(s.Model)
	if err != nil {
		t.Fatalf("count answer %q", s.Model)
	}
	return n
}

// Exchanges that end without a final call to a plugin (a later plugin
// denied them, and the plugin has no OnFinish) have their plugin-side state
// released once the host's exchange is garbage collected (P31 state does
// not outlive its exchange).
func TestReleaseOnGC_P31(t *testing.T) {
	p := loadMode(t, "leaky")
	f, _ := p.Factory()
	deny := gateway.Factory{Name: "canceller", New: func(json.RawMessage) (gateway.Plugin, error) {
		return &canceller{cancel: func() {}, deny: true}, nil
	}}
	ch, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{{Plugin: f.Name}, {Plugin: "canceller"}}},
		[]gateway.Factory{f, deny}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// No collection while the exchanges run, so that the count before the
	// forced collection is exact.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 20
	for range n {
		res := ch.Run(context.Background(), pipeline.Request{Request: gateway.Request{Method: "GET", URL: "/"}}, pipeline.Upstream{Status: 200}, pipeline.ExchangeOptions{})
		if res.Outcome.Kind != gateway.OutcomeDeny {
			t.Fatalf("outcome %+v, want deny", res.Outcome)
		}
	}
	if got := count(t, p); got != n {
		t.Fatalf("plugin holds %d exchanges before collection, want %d", got, n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		got := count(t, p)
		if got == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin still holds %d of %d exchanges 5s after they were collected", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
