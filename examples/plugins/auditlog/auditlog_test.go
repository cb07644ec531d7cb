package auditlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/examples/plugins/auditlog"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
)

// P12 P13 P14: not ready before Init, ready after, not ready after
// Shutdown; nothing is recorded outside that span; Init runs once.
func TestLifecycle_P12_P13_P14(t *testing.T) {
	ctx := context.Background()
	p := plugintest.New(t, auditlog.Factory(), "").(*auditlog.Logger)
	finish := func() error {
		r := plugintest.NewRun("GET", "/x", nil)
		return r.Finish(ctx, gateway.Outcome{Kind: gateway.OutcomeAllow, Status: 200}, p)[auditlog.Name]
	}
	if err := p.Ready(ctx); err == nil || !strings.Contains(err.Error(), "not initialised") {
		t.Fatalf("Ready before Init = %v", err)
	}
	if err := finish(); err == nil {
		t.Fatal("recorded before Init")
	}
	if err := p.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Init(ctx); err == nil {
		t.Fatal("second Init accepted")
	}
	if err := p.Ready(ctx); err != nil {
		t.Fatalf("Ready after Init = %v", err)
	}
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := p.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Ready(ctx); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Fatalf("Ready after Shutdown = %v", err)
	}
	if err := finish(); err == nil {
		t.Fatal("recorded after Shutdown")
	}
	if n := len(p.Lines()); n != 1 {
		t.Fatalf("%d lines, want 1", n)
	}
}

// P26 P29: one line per exchange with the outcome, the denying plugin,
// the MCP tool, and a redacted URL.
func TestRecordsOutcome_P26_P29(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	p, err := auditlog.New(auditlog.Config{}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Init(ctx); err != nil {
		t.Fatal(err)
	}
	parser := plugintest.New(t, mcpparser.Factory(), "")
	r := plugintest.NewRun("POST", "/mcp?api_key=sk-secret123456&x=1", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm"}}`))
	r.Request(ctx, parser, p)
	errs := r.Finish(ctx, gateway.Outcome{Kind: gateway.OutcomeDeny, Status: 403, DeniedBy: "tool-allowlist", Reason: `tool "rm" is not allowed`, Duration: 1500 * time.Microsecond}, parser, p)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	var rec auditlog.Record
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatalf("line %q: %v", out.String(), err)
	}
	if rec.Outcome != "deny" || rec.Status != 403 || rec.DeniedBy != "tool-allowlist" || rec.DurationMS != 1.5 ||
		len(rec.Tools) != 1 || rec.Tools[0] != "rm" || rec.Direction != "inbound" || rec.Method != "POST" {
		t.Fatalf("record %+v", rec)
	}
	if strings.Contains(rec.URL, "sk-secret") || !strings.Contains(rec.URL, "x=1") {
		t.Fatalf("URL not redacted: %s", rec.URL)
	}
	if strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("want exactly one line: %q", out.String())
	}
}

// The default ring is bounded and keeps the newest lines; concurrent
// exchanges each get one line (-race).
func TestRingBoundedConcurrent(t *testing.T) {
	ctx := context.Background()
	p := plugintest.New(t, auditlog.Factory(), `{"capacity":10}`).(*auditlog.Logger)
	if err := p.Init(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			r := plugintest.NewRun("GET", fmt.Sprintf("/%d", i), nil)
			if errs := r.Finish(ctx, gateway.Outcome{Kind: gateway.OutcomeAllow, Status: 200}, p); len(errs) != 0 {
				t.Error(errs)
			}
		})
	}
	wg.Wait()
	lines := p.Lines()
	if len(lines) != 10 {
		t.Fatalf("%d lines, want 10", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %q is not JSON", l)
		}
	}

	ring := auditlog.NewRing(2)
	fmt.Fprint(ring, "a\nb")
	fmt.Fprint(ring, "c\nd\n")
	if got := ring.Lines(); len(got) != 2 || got[0] != "bc" || got[1] != "d" || ring.Dropped() != 1 {
		t.Fatalf("ring %q dropped %d", got, ring.Dropped())
	}
}

// P6: strict config.
func TestConfig_P6(t *testing.T) {
	for config, want := range map[string]string{
		`{"output":"file"}`:      `field "output"`,
		`{"capacity":-1}`:        `field "capacity"`,
		`{"capacity":10,"x":1}`:  `unknown field "x"`,
		`{"capacity":"lots"}`:    `field "capacity": want integer`,
		`[{"output":"memory"}]`:  `want a JSON object`,
		`{"output":"stderr"}   `: ``,
	} {
		_, err := auditlog.Factory().New([]byte(config))
		if want == "" {
			if err != nil {
				t.Errorf("config %s: %v", config, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %s: err = %v, want %q", config, err, want)
		}
	}
	if err := config.CheckSchema(auditlog.Schema(), auditlog.Config{}); err != nil {
		t.Fatal(err)
	}
	if err := gateway.CheckDescription(auditlog.Description); err != nil {
		t.Fatal(err) // P5
	}
}
