package builtin_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/builtin"
	"github.com/abkit/abkit/sdk/gateway"
)

// P1 P2 P5: every example is valid, uniquely named, in name order, has a
// one-line description of at most 80 runes, and each family P factory
// makes instances that report its name and equal capabilities, with the
// bundle's description.
func TestAll_P1_P2_P5(t *testing.T) {
	all := builtin.All()
	if len(all) != 13 {
		t.Fatalf("%d examples, want 13", len(all))
	}
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.Name
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if err := gateway.CheckDescription(p.Description); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if f := p.Pipeline; f != nil {
			config := minimalConfig[p.Name]
			var raw []byte
			if config != "" {
				raw = []byte(config)
			}
			a, errA := f.New(raw)
			b, errB := f.New(raw)
			if errA != nil || errB != nil {
				t.Errorf("%s: New: %v %v", p.Name, errA, errB)
				continue
			}
			if a.Name() != p.Name || !a.Capabilities().Equal(b.Capabilities()) || a.Capabilities().Description != p.Description {
				t.Errorf("%s: instance name %q caps %+v", p.Name, a.Name(), a.Capabilities())
			}
			if (f.Config == nil) != (config == "") {
				t.Errorf("%s: schema present = %v, but the test gives config %q", p.Name, f.Config != nil, config)
			}
		}
		if p.Extension != nil {
			if _, err := p.Extension.New(); err != nil {
				t.Errorf("%s: Extension.New: %v", p.Name, err)
			}
			if p.Extension.Manifest.PluginID != p.Name {
				t.Errorf("%s: manifest plugin ID %q", p.Name, p.Extension.Manifest.PluginID)
			}
		}
		if h := p.Hooks; h != nil {
			for _, s := range h.Submit {
				if s.Spec().ID != p.Name || s.Spec().Validate() != nil {
					t.Errorf("%s: submit spec %+v", p.Name, s.Spec())
				}
			}
			for _, r := range h.Tools {
				if r.Spec().ID != p.Name || r.Spec().Validate() != nil {
					t.Errorf("%s: tool spec %+v", p.Name, r.Spec())
				}
			}
		}
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Fatalf("names not sorted and unique: %v", names)
	}
	if p, ok := builtin.Get("guardrail"); !ok || p.Pipeline == nil {
		t.Fatal("Get(guardrail)")
	}
	if n := len(builtin.Factories()); n != 8 {
		t.Fatalf("%d family P factories, want 8", n)
	}
	fam := map[string]int{}
	for _, p := range all {
		fam[strings.Join(p.Families(), "")]++
	}
	if fam["P"] != 8 || fam["D"] != 3 || fam["H"] != 2 {
		t.Fatalf("families %v", fam)
	}
}

// minimalConfig is the smallest valid config of each configurable family P
// example; the others take none.
var minimalConfig = map[string]string{
	"tool-allowlist": `{"allow":[]}`,
	"guardrail":      `{"phrases":["x"]}`,
	"pii-redactor":   `{}`,
	"rate-limiter":   `{"limit":1}`,
	"audit-log":      `{}`,
}
