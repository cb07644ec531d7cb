package runtimekit_test

import (
	"testing"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/runtimekit"
)

// P6, P10: Entries refuses an unknown mode and on_error, an unknown plugin
// and config for a plugin that takes none, and leaves out what is off.
func TestEntries(t *testing.T) {
	sc := runtimekit.PipelineScenario{PipelineScenario: &abkitv1.PipelineScenario{Mode: "sideways",
		Plugins: []*abkitv1.ProbeSpec{{Name: "a"}, {Name: "b", ConfigSchemaJson: []byte(`{}`)}},
		Entries: []*abkitv1.PipelineEntry{
			{Plugin: "a"}, {Plugin: "b", ConfigJson: []byte(`{"x":1}`), OnError: "observe"}, {Plugin: "a", OnError: "off"},
			{Plugin: "nope"}, {Plugin: "a", OnError: "maybe"}, {Plugin: "a", ConfigJson: []byte(`{"x":1}`)}, {Plugin: ""},
		}}}
	got, errs := sc.Entries()
	var rules []string
	for _, e := range errs {
		rules = append(rules, e.GetRule()+":"+e.GetPlugin())
	}
	want := []string{"P10:", "P6:nope", "P6:a", "P6:a"}
	if len(rules) != len(want) {
		t.Fatalf("errors %v, want %v", rules, want)
	}
	for i := range want {
		if rules[i] != want[i] {
			t.Fatalf("errors %v, want %v", rules, want)
		}
	}
	if len(got) != 5 || !got[1].Observe || got[0].Plugin.GetName() != "a" || got[4].Plugin == nil || got[4].GetPlugin() != "" {
		t.Fatalf("entries %+v; want a, b (observe), a, a and the nameless one", got)
	}
}
