package runtimesuite

import (
	"slices"
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addPipelineBuildCases registers the cases of build checks: names, unknown plugins, configs, requires, writers, modes, and the build choices (P1, P6-P10).
func addPipelineBuildCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		pcase("P1/repeated-name/refused-or-both-run", []string{"P1", "P6"}, "a chain naming one plugin twice is refused, or runs both entries: never one silently",
			"Builds a chain with two entries of plugin a and runs one exchange. Either alternative of choice P1.names is right: the build fails with an error naming a, or it succeeds and a gets OnRequest twice (both entries). A runtime that drops an entry silently fails here whatever it declares.",
			p1RepeatedNameRefusedOrBothRun),
		choice("P1.names", pcase("P1/repeated-name/both-run", []string{"P1"}, "with repeated names allowed, both entries of a name run and the first counts for requires",
			"For a runtime declaring P1.names=repeated: a chain [a, b, a] where b requires a builds, and one exchange calls OnRequest on a, b, a in order.",
			p1RepeatedNameBothRun), "repeated"),
		choice("P6.build-errors", pcase("P6/build/fail-fast", []string{"P6"}, "a fail-fast build reports an error it owes, and only errors it owes",
			"For a runtime declaring P6.build-errors=fail-fast: the chain [ghost, a with a config block it takes none for, b requiring the absent zz] must fail to build with at least one error, each of them one the chain has (P6 for ghost or a, P7 for b).",
			p6BuildFailFast), "fail-fast"),
	} {
		r.Add(c)
	}
	// Build checks P1 (two entries of one name, an entry naming no plugin)
	// and P6–P11: every misconfiguration, all errors reported.
	w := &abkitv1.Capabilities{ReadsBody: true, WritesResponseBody: true}
	wOnly := &abkitv1.Capabilities{WritesResponseBody: true} // reads_body by P4 only
	for _, b := range []buildCheck{
		{"P1/duplicate-name", []plug{{name: "a"}}, []string{"a", "a"}, "", []string{"P1(a)"}, "P1.names"},
		{"P1/empty-name", []plug{{name: "a"}}, []string{"a", ""}, "", []string{"P1()"}, "P1.names"},
		{"P1/all-errors", []plug{{name: "a"}, {name: "b"}}, []string{"a", "b", "a", "", "ghost", "b"}, "", []string{"P1()", "P1(a)", "P1(b)", "P6(ghost)"}, "P6.build-errors"},
		{"P7/joined", []plug{{name: "a", caps: &abkitv1.Capabilities{Requires: []string{"x"}}}, {name: "b", caps: &abkitv1.Capabilities{RequiresAny: []string{"y"}}}}, []string{"a", "b"}, "", []string{"P7(a)", "P8(b)"}, ""},
		{"P6/unknown-name", []plug{{name: "a"}}, []string{"a", "ghost"}, "", []string{"P6(ghost)"}, ""},
		{"P6/config-without-schema", []plug{{name: "a"}}, []string{"a:{\"x\":1}"}, "", []string{"P6(a)"}, ""},
		{"P6/off-dropped", []plug{{name: "a"}}, []string{"a", "ghost!off"}, "", nil, ""},
		{"P6/all-errors", []plug{{name: "a"}, {name: "b", caps: &abkitv1.Capabilities{Requires: []string{"zz"}}}}, []string{"ghost", "a:{\"x\":1}", "b"}, "", []string{"P6(a)", "P6(ghost)", "P7(b)"}, "P6.build-errors"},
		{"P7/missing", []plug{{name: "a", caps: &abkitv1.Capabilities{Requires: []string{"b"}}}}, []string{"a"}, "", []string{"P7(a)"}, ""},
		{"P7/late", []plug{{name: "a", caps: &abkitv1.Capabilities{Requires: []string{"b"}}}, {name: "b"}}, []string{"a", "b"}, "", []string{"P7(a)"}, ""},
		{"P8/none-present", []plug{{name: "a", caps: &abkitv1.Capabilities{RequiresAny: []string{"b", "c"}}}}, []string{"a"}, "", []string{"P8(a)"}, ""},
		{"P8/present-late", []plug{{name: "a", caps: &abkitv1.Capabilities{RequiresAny: []string{"b", "c"}}}, {name: "b"}, {name: "c"}}, []string{"b", "a", "c"}, "", []string{"P8(a)"}, ""},
		{"P9/two-writers", []plug{{name: "w1", caps: wOnly}, {name: "w2", caps: wOnly}}, []string{"w1", "w2"}, "", []string{"P9(w2)"}, ""},
		{"P9/reader-after-writer", []plug{{name: "w1", caps: w}, {name: "r", caps: &abkitv1.Capabilities{ReadsBody: true}}}, []string{"w1", "r"}, "", []string{"P9(r)"}, ""},
		{"P10/waypoint-writer", []plug{{name: "w1", caps: w}}, []string{"w1"}, "waypoint", []string{"P10(w1)"}, ""},
		// Valid chains next to the invalid ones: a runtime that rejects
		// too much is as wrong as one that accepts too much.
		{"P1/accept/names-differ-in-case", []plug{{name: "a"}, {name: "A"}}, []string{"a", "A"}, "", nil, ""},
		{"P6/accept/null-config", []plug{{name: "a", schema: `{"type":"object"}`}}, []string{"a:null"}, "", nil, ""},
		{"P6/accept/empty-config", []plug{{name: "a", schema: `{"type":"object"}`}}, []string{"a:"}, "", nil, ""},
		{"P6/accept/config-with-schema", []plug{{name: "a", schema: `{"type":"object"}`}}, []string{`a:{"x":1}`}, "", nil, ""},
		{"P6/accept/on-error-spellings", []plug{{name: "a"}, {name: "b"}, {name: "c"}}, []string{"a@observe", "b@enforce", "c@"}, "", nil, ""},
		{"P6/unknown-on-error", []plug{{name: "a"}}, []string{"a@ignore"}, "", []string{"P6(a)"}, ""},
		{"P7/accept/present-earlier", []plug{{name: "a", caps: &abkitv1.Capabilities{Requires: []string{"b"}}}, {name: "b"}}, []string{"b", "a"}, "", nil, ""},
		{"P8/accept/one-of-several", []plug{{name: "a", caps: &abkitv1.Capabilities{RequiresAny: []string{"b", "c", "d"}}}, {name: "c"}}, []string{"c", "a"}, "", nil, ""},
		{"P9/accept/writer-each-direction", []plug{{name: "wq", caps: &abkitv1.Capabilities{WritesRequestBody: true}}, {name: "wr", caps: wOnly}}, []string{"wq", "wr"}, "", nil, ""},
		{"P9/accept/reader-before-writer", []plug{{name: "r", caps: &abkitv1.Capabilities{ReadsBody: true}}, {name: "w1", caps: w}}, []string{"r", "w1"}, "", nil, ""},
		{"P9/accept/off-writer", []plug{{name: "w1", caps: wOnly}, {name: "w2", caps: wOnly}}, []string{"w1", "w2!off"}, "", nil, ""},
		{"P9/accept/writer-each-direction-reversed", []plug{{name: "wq", caps: &abkitv1.Capabilities{WritesRequestBody: true}}, {name: "wr", caps: wOnly}}, []string{"wr", "wq"}, "", nil, ""},
		{"P6/config-without-schema-still-present", []plug{{name: "a"}, {name: "b", caps: &abkitv1.Capabilities{Requires: []string{"a"}}}}, []string{`a:{"x":1}`, "b"}, "", []string{"P6(a)"}, ""},
		{"P10/accept/waypoint-reader", []plug{{name: "r", caps: &abkitv1.Capabilities{ReadsBody: true}}}, []string{"r"}, "waypoint", nil, ""},
		{"P10/unknown-mode", []plug{{name: "a"}}, []string{"a"}, "sideways", []string{"P10()"}, ""},
	} {
		b := b
		rules := []string{strings.SplitN(b.name, "/", 2)[0]}
		if rules[0] != "P6" {
			rules = append(rules, "P6")
		}
		summary, explain := "build check "+b.name+": rejected at build time with every error reported",
			"Builds a chain with a known set of misconfigurations and compares the reported errors (rule and plugin) with the expected set: every error, not just the first, and never silently accepted."
		if b.want == nil {
			summary, explain = "build check "+b.name+": a valid chain is accepted and runs",
				"Builds a chain that the rule allows and expects no build error, then runs one exchange through it: every plugin not switched off gets OnRequest. A runtime that rejects valid chains fails here."
		}
		c := pcase("P6/build/"+strings.ReplaceAll(b.name, "/", "-"), rules, summary, explain,
			p6Build(b))
		if b.choice != "" {
			c = choice(b.choice, c)
		}
		r.Add(c)
	}
}

// buildCheck is one chain of the build checks and the errors it owes.
type buildCheck struct {
	name    string
	plugs   []plug
	entries []string // plugin names; "name:cfg" adds a config, "name!off" off
	mode    string
	want    []string // rule(plugin), sorted
	choice  string   // the choice point the check follows, if any
}

func p6Build(b buildCheck) func(t *conformance.T) {
	return func(t *conformance.T) {
		p := pipe{plugs: b.plugs, mode: b.mode}
		var active []string
		for _, e := range b.entries {
			en := &abkitv1.PipelineEntry{Plugin: e}
			if n, cfg, ok := strings.Cut(e, ":"); ok {
				en.Plugin, en.ConfigJson = n, []byte(cfg)
			}
			if n, ok := strings.CutSuffix(e, "!off"); ok {
				en.Plugin, en.OnError = n, "off"
			}
			if n, oe, ok := strings.Cut(e, "@"); ok {
				en.Plugin, en.OnError = n, oe
			}
			if en.OnError != "off" {
				active = append(active, en.Plugin)
			}
			p.entries = append(p.entries, en)
		}
		if b.want == nil {
			p.exchanges = []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}
		}
		calls, res := p.run(t, "P6")
		if b.want == nil && len(res.GetBuildErrors()) == 0 {
			rule := strings.SplitN(b.name, "/", 2)[0]
			t.Diff(rule, "OnRequest calls of the accepted chain", each(active, "request"), seq(calls, "request"))
		}
		want := b.want
		if b.choice != "P1.names" && t.Alternative("P1.names") == "repeated" {
			want = repeatedNames(want)
		}
		got := matchBuildErrors(want, res.GetBuildErrors())
		got = slices.Compact(got) // one problem may be reported under two checks
		rule := strings.SplitN(b.name, "/", 2)[0]
		if len(got) != len(want) && len(want) > 1 {
			rule = "P6"
		}
		if !t.Diff(rule, "build errors rule(plugin)", want, got) {
			t.Logf("messages:%s", joinMsgs(res.GetBuildErrors()))
		}
		// An error must say what is wrong: a config block on a
		// plugin without a schema is about the config, not an
		// unknown plugin.
		if strings.HasPrefix(b.name, "P6/config-without-schema") {
			for _, e := range res.GetBuildErrors() {
				if e.GetPlugin() == "a" && !strings.Contains(strings.ToLower(e.GetMessage()), "config") {
					t.Errorf("P6", "the error for a's config block does not mention the config: %q", e.GetMessage())
				}
			}
		}
	}
}

func p1RepeatedNameRefusedOrBothRun(t *conformance.T) {
	p := pipe{plugs: []plug{{name: "a"}}, entries: []*abkitv1.PipelineEntry{{Plugin: "a"}, {Plugin: "a"}},
		exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}
	calls, res := p.run(t, "P1")
	if errs := res.GetBuildErrors(); len(errs) > 0 {
		for _, e := range errs {
			if e.GetPlugin() == "a" || strings.Contains(e.GetMessage(), `"a"`) {
				return
			}
		}
		t.Errorf("P1", "the build failed, but no error names a: %s", joinMsgs(errs))
		return
	}
	t.Diff("P1", "OnRequest calls of a chain with a twice (built, so both entries must run)", []string{"a.request", "a.request"}, seq(calls, "request"))
}

func p1RepeatedNameBothRun(t *conformance.T) {
	p := pipe{plugs: []plug{{name: "a"}, {name: "b", caps: &abkitv1.Capabilities{Requires: []string{"a"}}}},
		entries:   []*abkitv1.PipelineEntry{{Plugin: "a"}, {Plugin: "b"}, {Plugin: "a"}},
		exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}
	calls, res := p.run(t, "P1")
	if errs := res.GetBuildErrors(); len(errs) > 0 {
		t.Fatalf("P1", "the build failed although repeated names are declared allowed: %s", joinMsgs(errs))
	}
	t.Diff("P1", "OnRequest calls", []string{"a.request", "b.request", "a.request"}, seq(calls, "request"))
}

func p6BuildFailFast(t *conformance.T) {
	p := pipe{plugs: []plug{{name: "a"}, {name: "b", caps: &abkitv1.Capabilities{Requires: []string{"zz"}}}},
		entries: []*abkitv1.PipelineEntry{{Plugin: "ghost"}, {Plugin: "a", ConfigJson: []byte(`{"x":1}`)}, {Plugin: "b"}}}
	_, res := p.run(t, "P6")
	owed := []string{"P6(a)", "P6(ghost)", "P7(b)"}
	got := matchBuildErrors(owed, res.GetBuildErrors())
	if len(got) == 0 {
		t.Fatalf("P6", "the chain was built; want a build error")
	}
	for _, g := range got {
		if !slices.Contains(owed, g) {
			t.Errorf("P6", "build error %s is not one the chain has (%v): %s", g, owed, joinMsgs(res.GetBuildErrors()))
		}
	}
}
