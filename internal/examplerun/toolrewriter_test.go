package examplerun_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/toolrewriter"
	"github.com/abkit/abkit/internal/hookbus"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
)

// H5: through the real bus, a rule rewrites arguments (validated, then
// seen by the next reactor), swallows an event so no later reactor runs,
// or passes it.
func TestRewriteSwallowPass_H5(t *testing.T) {
	r, err := toolrewriter.New(toolrewriter.Config{Rules: []toolrewriter.Rule{
		{Tool: "debug_*", Swallow: true},
		{Tool: "deploy", Phase: hooks.PhaseStart, SetArguments: map[string]json.RawMessage{"dry_run": json.RawMessage("true")}, RemoveArguments: []string{"force"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var seen []hooks.ToolEvent
	later := hooks.NewToolReactor(hooks.Spec{ID: "later", Order: 100}, func(_ context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
		seen = append(seen, ev)
		return hooks.Pass(), nil
	})
	bus, err := hookbus.New(hookbus.Config{Tools: []hooks.ToolReactor{later, r}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	res, err := bus.RunTool(ctx, hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "c1", Name: "deploy", Arguments: json.RawMessage(`{"env":"prod","force":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	var args map[string]any
	if err := json.Unmarshal(res.Event.Arguments, &args); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(args, map[string]any{"env": "prod", "dry_run": true}) || len(seen) != 1 || string(seen[0].Arguments) != string(res.Event.Arguments) {
		t.Fatalf("rewritten args %v; later reactor saw %+v", args, seen)
	}

	seen = nil
	res, err = bus.RunTool(ctx, hooks.ToolEvent{Phase: hooks.PhaseResult, CallID: "c2", Name: "debug_dump", Result: json.RawMessage(`"x"`)})
	if err != nil || !res.Swallowed || res.SwallowedBy != toolrewriter.Name || len(seen) != 0 {
		t.Fatalf("swallow: %+v err %v, later saw %d events", res, err, len(seen))
	}

	// The deploy rule is limited to the start phase; a result passes.
	in := hooks.ToolEvent{Phase: hooks.PhaseResult, CallID: "c3", Name: "deploy", Arguments: json.RawMessage(`{"force":true}`), Result: json.RawMessage(`{}`)}
	res, err = bus.RunTool(ctx, in)
	if err != nil || res.Swallowed || string(res.Event.Arguments) != `{"force":true}` {
		t.Fatalf("pass: %+v err %v", res, err)
	}
}

// Arguments that already match are passed without a rewrite; non-object
// arguments are an error the bus's policy handles (H6).
func TestNoOpAndError_H6(t *testing.T) {
	r, _ := toolrewriter.New(toolrewriter.DefaultConfig())
	d, err := r.OnTool(context.Background(), hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "c", Name: "deploy_app", Arguments: json.RawMessage(`{"dry_run": true}`)})
	if err != nil || d.Kind != hooks.DecisionPass {
		t.Fatalf("decision %+v err %v", d, err)
	}
	if _, err := r.OnTool(context.Background(), hooks.ToolEvent{Phase: hooks.PhaseStart, CallID: "c", Name: "deploy", Arguments: json.RawMessage(`[1]`)}); err == nil {
		t.Fatal("array arguments accepted")
	}
}

// Config errors name the rule; the bundle is valid (P5).
func TestConfigPlugin_P5(t *testing.T) {
	for _, c := range []toolrewriter.Config{
		{Rules: []toolrewriter.Rule{{Tool: "x"}}},
		{Rules: []toolrewriter.Rule{{Tool: "x", Swallow: true, RemoveArguments: []string{"a"}}}},
		{Rules: []toolrewriter.Rule{{Tool: "x", Phase: "middle", Swallow: true}}},
		{Rules: []toolrewriter.Rule{{Tool: "x", SetArguments: map[string]json.RawMessage{"a": json.RawMessage("{")}}}},
	} {
		if _, err := toolrewriter.New(c); err == nil || !strings.Contains(err.Error(), "rules[0]") {
			t.Errorf("config %+v: err = %v", c, err)
		}
	}
	p := toolrewriter.Plugin()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := gateway.CheckDescription(p.Description); err != nil {
		t.Fatal(err)
	}
}
