package pipeline

import (
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

// P1 (choice P1.names): by default a repeated or empty name is a P1 error;
// with Spec.RepeatedNames a name may repeat, the first counting for P7, and
// an empty name is an unknown plugin (P6).
func TestRepeatedNamesP1(t *testing.T) {
	lookup, reg := infoLookup(Info{Name: "a"}, Info{Name: "b", Capabilities: gateway.Capabilities{Requires: []string{"a"}}})
	rules := func(spec Spec) []string {
		var out []string
		for _, e := range Refusals(Validate(spec, lookup, reg)) {
			out = append(out, e.Rule)
		}
		return out
	}
	spec := Spec{Entries: entries("a", "b", "a")}
	if got := rules(spec); len(got) != 1 || got[0] != "P1" {
		t.Errorf("unique names: refusals %v; want one P1", got)
	}
	spec.RepeatedNames = true
	if got := rules(spec); len(got) != 0 {
		t.Errorf("repeated names: refusals %v; want none", got)
	}
	spec.Entries = entries("a", "")
	if got := rules(spec); len(got) != 1 || got[0] != "P6" {
		t.Errorf("repeated names, an empty name: refusals %v; want one P6", got)
	}
}
