package runtimesuite

import (
	"strings"
	"testing"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

func twoPlugins() *abkitv1.PipelineScenario {
	return &abkitv1.PipelineScenario{
		Plugins: []*abkitv1.ProbeSpec{{Name: "a", Behaviours: []string{"finish", "stream"}}, {Name: "b", Behaviours: []string{"finish"}}},
		Entries: []*abkitv1.PipelineEntry{{Plugin: "a"}, {Plugin: "b"}}, Exchanges: []*abkitv1.ExchangeSpec{{}, {}}}
}

func rules(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return strings.Join(out, ",")
}

// Each runtime monitor finds what it is for, and nothing in a clean run.
func TestMonitorPipeline(t *testing.T) {
	res := &abkitv1.PipelineRun{Exchanges: []*abkitv1.ExchangeRun{{}, {}}}
	st := func(s string) *string { return &s }
	setState := &abkitv1.ProbeReply{SetState: true, State: "a@0"}
	clean := []Call{
		{Probe: "a", Hook: "request", Reply: setState}, {Probe: "b", Hook: "request"},
		{Probe: "a", Hook: "frame", Frame: "data: x\n\n", State: st("a@0")}, {Probe: "a", Hook: "frame", Last: true, State: st("a@0")},
		{Probe: "b", Hook: "finish"}, {Probe: "a", Hook: "finish", State: st("a@0")},
	}
	res.Exchanges[0].Streamed = true
	if fs := MonitorPipeline(twoPlugins(), clean, res, nil); len(fs) != 0 {
		t.Fatalf("a clean run: findings %v", fs)
	}
	for _, c := range []struct {
		name, want string
		calls      []Call
	}{
		{"finish twice", "P26", append(clean[:len(clean):len(clean)], Call{Probe: "a", Hook: "finish"})},
		{"finish left out", "P26", clean[:5]},
		{"two last calls", "P21", append(append([]Call{}, clean[:4]...), Call{Probe: "a", Hook: "frame", Last: true}, clean[4], clean[5])},
		{"frame after last", "P21", append(append([]Call{}, clean[:4]...), Call{Probe: "a", Hook: "frame", Frame: "data: y\n\n"}, clean[4], clean[5])},
		{"no last call", "P21", append(append([]Call{}, clean[:3]...), clean[4], clean[5])},
		{"state from another exchange", "P31", append(append([]Call{}, clean...), Call{Probe: "a", Hook: "request", Exchange: 1, State: st("a@0")}, Call{Probe: "a", Hook: "finish", Exchange: 1})},
		{"identity from nowhere", "P36", append(append([]Call{}, clean...), Call{Probe: "a", Hook: "request", Exchange: 1, Identity: `{"subject":"x"}`}, Call{Probe: "a", Hook: "finish", Exchange: 1})},
		{"a frame that is not an event", "P19", []Call{{Probe: "a", Hook: "request"}, {Probe: "a", Hook: "frame", Frame: "data: x"}, {Probe: "a", Hook: "frame", Last: true}, {Probe: "a", Hook: "finish"}}},
		{"init twice", "P12", append(append([]Call{}, clean...), Call{Probe: "a", Hook: "init"}, Call{Probe: "a", Hook: "init"})},
	} {
		if got := rules(MonitorPipeline(twoPlugins(), c.calls, res, nil)); !strings.Contains(got, c.want) {
			t.Errorf("%s: findings %q; want one of %s", c.name, got, c.want)
		}
	}
	// Nothing runs after a failed build; a built chain with a repeated
	// name is a P1 finding unless P1.names=repeated is declared.
	failed := &abkitv1.PipelineRun{BuildErrors: []*abkitv1.BuildError{{Rule: "P6"}}}
	if got := rules(MonitorPipeline(twoPlugins(), clean[:1], failed, nil)); got != "P6" {
		t.Errorf("calls after a failed build: %q; want P6", got)
	}
	dup := twoPlugins()
	dup.Entries = append(dup.Entries, &abkitv1.PipelineEntry{Plugin: "b"})
	if got := rules(MonitorPipeline(dup, nil, &abkitv1.PipelineRun{}, nil)); got != "P1" {
		t.Errorf("a repeated name built: %q; want P1", got)
	}
	if got := rules(MonitorPipeline(dup, nil, &abkitv1.PipelineRun{}, map[string]string{"P1.names": "repeated"})); got != "" {
		t.Errorf("a repeated name built under P1.names=repeated: %q; want none", got)
	}
}

func TestMonitorInterceptAndHooks(t *testing.T) {
	sc := &abkitv1.InterceptScenario{Point: "input.receive", Repeat: 1, Extensions: []*abkitv1.ProbeSpec{{Name: "a"}, {Name: ""}}}
	calls := []Call{{Probe: "a", Hook: "intercept", Point: "input.receive"}, {Probe: "a", Hook: "intercept", Point: "input.receive"},
		{Probe: "a", Hook: "notify"}, {Probe: "a", Hook: "notify"}, {Probe: "", Hook: "intercept"}}
	if got := rules(MonitorIntercept(sc, calls)); got != "D20,D4,D5" {
		t.Errorf("intercept findings %q; want D20 (told twice), D4 (asked twice), D5 (nameless called)", got)
	}
	hs := &abkitv1.HookScenario{Hooks: []*abkitv1.ProbeSpec{{Name: "h"}}}
	if got := rules(MonitorHooks(hs, []Call{{Probe: "h"}, {Probe: "h"}})); got != "H1" {
		t.Errorf("hook findings %q; want H1", got)
	}
}
