package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/intercept"
)

type lintKey struct{ Plugin, Rule string }

// TestLintFindings checks a catalog file with one or more findings per rule:
// P1 (duplicate name), P5 (long, multi-line), P7/P8 (unknown and self
// dependencies), C1 (schema), D1, D3, D4, D17 (extension) and H1, H3
// (hooks). Every finding must carry a fix.
func TestLintFindings(t *testing.T) {
	c, err := Load(context.Background(), []string{"file:testdata/lint/broken.yaml"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs := Lint(c)
	count := map[lintKey]int{}
	for _, f := range fs {
		count[lintKey{f.Plugin, f.Rule}]++
		if f.Fix == "" || f.Msg == "" {
			t.Errorf("finding without message or fix: %v", f)
		}
	}
	want := map[lintKey]int{
		{"good", "P1"}:             1,
		{"long-description", "P5"}: 1,
		{"two-lines", "P5"}:        1,
		{"needs-ghost", "P7"}:      2, // mcp-parsr unknown, itself
		{"needs-ghost", "P8"}:      1, // ghost
		// strng type; 2.5 not integer; "two" not integer; default 3 not in
		// enum; nested fields on boolean; "soon"; empty nested name; enum on
		// object; count twice; array default item c not in the item enum.
		{"bad-schema", "C1"}:     10,
		{"bad-extension", "D1"}:  1,
		{"bad-extension", "D3"}:  1,
		{"bad-extension", "D4"}:  1,
		{"bad-extension", "D17"}: 2,
		{"bad-hooks", "H1"}:      2,
		{"bad-hooks", "H3"}:      1,
	}
	if diff := cmp.Diff(want, count); diff != "" {
		for _, f := range fs {
			t.Log(f)
		}
		t.Errorf("findings per plugin and rule (-want +got):\n%s", diff)
	}
}

func TestLintTypoHint(t *testing.T) {
	c, err := Load(context.Background(), []string{"file:testdata/lint/broken.yaml"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Lint(c) {
		if f.Rule == "P7" && strings.Contains(f.Msg, "mcp-parsr") && strings.Contains(f.Msg, "did you mean") {
			t.Errorf("hint for mcp-parsr should find no similar name in this catalog: %s", f.Msg)
		}
	}
}

// flipper reports different capabilities on every other instance: a P2
// violation.
type flipper struct {
	n    int64
	name string
}

func (f *flipper) Name() string { return f.name }
func (f *flipper) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{ReadsBody: f.n%2 == 0, Description: "Flips its capabilities"}
}
func (f *flipper) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (f *flipper) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (f *flipper) OnFinish(context.Context, *gateway.Exchange) error { return nil }

// TestLintP2 instantiates builtin plugins twice: one whose instances
// disagree on capabilities, one whose instance reports another name, one
// that cannot be instantiated, and one that needs its defaults.
func TestLintP2(t *testing.T) {
	var n atomic.Int64
	builtins := []Builtin{
		{Pipeline: &gateway.Factory{Name: "flipper", New: func(json.RawMessage) (gateway.Plugin, error) {
			return &flipper{n: n.Add(1), name: "flipper"}, nil
		}}},
		{Pipeline: &gateway.Factory{Name: "misnamed", New: func(json.RawMessage) (gateway.Plugin, error) {
			return &flipper{n: 2, name: "other"}, nil
		}}},
		{Pipeline: &gateway.Factory{Name: "broken", New: func(json.RawMessage) (gateway.Plugin, error) {
			return nil, errors.New("boom")
		}}},
		{Pipeline: &gateway.Factory{
			Name:   "needs-config",
			Config: &gateway.ConfigSchema{Fields: []gateway.Field{{Name: "mode", Type: "string", Default: "fast"}}},
			New: func(cfg json.RawMessage) (gateway.Plugin, error) {
				if !strings.Contains(string(cfg), `"fast"`) {
					return nil, errors.New("mode is required")
				}
				return &flipper{n: 2, name: "needs-config"}, nil
			},
		}},
		{Name: "ext", Description: "An extension only", Extension: &intercept.Manifest{PluginID: "ext", Slots: []string{"permission"}}},
	}
	c, err := Load(context.Background(), []string{"builtin"}, Options{Builtin: func() []Builtin { return builtins }})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0].Msg, "boom") {
		t.Errorf("notes = %v, want one about broken", c.Notes)
	}
	got := map[lintKey]int{}
	for _, f := range Lint(c) {
		got[lintKey{f.Plugin, f.Rule}]++
	}
	want := map[lintKey]int{
		{"flipper", "P2"}:  1,
		{"misnamed", "P2"}: 2, // both instances
		{"broken", "P2"}:   1,
		{"broken", "P5"}:   1, // no instance, so no description
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	d, _ := c.Lookup("needs-config")
	if d.Capabilities == nil || !d.Capabilities.ReadsBody || !slices_equal(d.Behaviours, []string{gateway.BehaviourFinish}) {
		t.Errorf("needs-config = %+v, want capabilities from its defaults and the finish behaviour", d)
	}
	if e, _ := c.Lookup("ext"); !e.HasFamily(family.Dispatch) || e.HasFamily(family.Pipeline) {
		t.Errorf("ext families = %v, want [D]", e.Families)
	}
}

func slices_equal(a, b []string) bool { return cmp.Equal(a, b) }
