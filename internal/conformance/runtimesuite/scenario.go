package runtimesuite

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// plug declares one probe plugin of a pipeline scenario.
type plug struct {
	name       string
	caps       *abkitv1.Capabilities
	behaviours []string
	schema     string // non-empty: takes config
	script     Script
}

// pipe is a pipeline scenario in the suite's terms.
type pipe struct {
	plugs     []plug
	entries   []*abkitv1.PipelineEntry // nil: one enforce entry per plug
	mode      string
	finishTO  int64
	start     bool
	ready     uint32
	stop      bool
	stopTO    int64
	exchanges []*abkitv1.ExchangeSpec
}

// chain returns n plugins p0…p(n-1) with the given behaviours.
func chain(n int, behaviours ...string) []plug {
	out := make([]plug, n)
	for i := range out {
		out[i] = plug{name: fmt.Sprintf("p%d", i), behaviours: behaviours}
	}
	return out
}

func get(url string) *abkitv1.HTTPRequest { return &abkitv1.HTTPRequest{Method: "GET", Url: url} }

func jsonUpstream(body string) *abkitv1.UpstreamSpec {
	return &abkitv1.UpstreamSpec{Status: 200, Header: []*abkitv1.Header{{Name: "Content-Type", Values: []string{"application/json"}}}, Body: []byte(body)}
}

func sseUpstream(chunks []string, early bool) *abkitv1.UpstreamSpec {
	u := &abkitv1.UpstreamSpec{Status: 200, Header: []*abkitv1.Header{{Name: "Content-Type", Values: []string{"text/event-stream"}}}, EarlyEnd: early}
	for _, c := range chunks {
		u.Chunks = append(u.Chunks, []byte(c))
	}
	return u
}

func sseFrames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("data: {\"n\":%d}\n\n", i)
	}
	return out
}

func exchange(up *abkitv1.UpstreamSpec) *abkitv1.ExchangeSpec {
	return &abkitv1.ExchangeSpec{Request: get("http://upstream/x"), Upstream: up}
}

// run runs the scenario on the case's runtime and returns the calls and the
// runtime's answer; a transport failure ends the case.
func (p pipe) run(t *conformance.T, rule string) ([]Call, *abkitv1.PipelineRun) {
	s := session(t)
	defer s.Close()
	sc := &abkitv1.PipelineScenario{BrokerId: s.Broker(), Direction: "inbound", Mode: p.mode, FinishTimeoutNs: p.finishTO,
		Start: p.start, ReadyCalls: p.ready, Stop: p.stop, StopTimeoutNs: p.stopTO, Exchanges: p.exchanges}
	for i := range p.plugs {
		pl := &p.plugs[i]
		c := pl.caps
		caps := &abkitv1.Capabilities{Description: "probe " + pl.name, ReadsBody: c.GetReadsBody(), WritesRequestBody: c.GetWritesRequestBody(),
			WritesResponseBody: c.GetWritesResponseBody(), Requires: c.GetRequires(), RequiresAny: c.GetRequiresAny()}
		ps := &abkitv1.ProbeSpec{Probe: s.Probe(pl.name, pl.script), Name: pl.name, Capabilities: caps, Behaviours: pl.behaviours}
		if pl.schema != "" {
			ps.ConfigSchemaJson = []byte(pl.schema)
		}
		sc.Plugins = append(sc.Plugins, ps)
	}
	sc.Entries = p.entries
	if sc.Entries == nil {
		for i := range p.plugs {
			pl := &p.plugs[i]
			sc.Entries = append(sc.Entries, &abkitv1.PipelineEntry{Plugin: pl.name})
		}
	}
	res, err := s.RPC().RunPipeline(t.Context(), sc)
	if err != nil {
		t.Fatalf(rule, "the runtime failed to run the pipeline scenario: %v", err)
	}
	calls := s.Calls()
	for _, c := range calls {
		t.Logf("#%d %s.%s ex=%d frame=%d last=%v %q", c.Seq, c.Probe, c.Hook, c.Exchange, c.FrameIndex, c.Last, c.Frame)
	}
	report(t, MonitorPipeline(sc, calls, res, declared(t)))
	return calls, res
}

// seq renders calls as "probe.hook" (frames as "probe.frameN" or
// "probe.last"), keeping only the hooks named (all when none).
func seq(calls []Call, hooks ...string) []string {
	var out []string
	for _, c := range calls {
		if len(hooks) > 0 && !slices.Contains(hooks, c.Hook) {
			continue
		}
		s := c.Probe + "." + c.Hook
		if c.Hook == "frame" {
			if c.Last {
				s = c.Probe + ".last"
			} else {
				s = fmt.Sprintf("%s.frame%d", c.Probe, c.FrameIndex)
			}
		}
		out = append(out, s)
	}
	return out
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("p%d", i)
	}
	return out
}

func rev(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out
}

func each(xs []string, suffix string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x + "." + suffix
	}
	return out
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func rulesOf(errs []*abkitv1.BuildError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, ruleOf(e)+"("+e.GetPlugin()+")")
	}
	return out
}

// kindRules maps the kinds of BuildError.kind to their rule, for runtimes
// whose errors carry no rule ID.
var kindRules = map[string]string{
	"duplicate-name": "P1", "empty-name": "P1",
	"unknown-plugin": "P6", "config": "P6", "on-error": "P6",
	"requires": "P7", "requires-any": "P8", "writer": "P9",
	"waypoint-writer": "P10", "mode": "P10",
}

// ruleOf is the rule of a build error: as the runtime named it, from its
// kind, or "?" when it says neither (matched by plugin alone, see
// matchBuildErrors).
func ruleOf(e *abkitv1.BuildError) string {
	if r := e.GetRule(); r != "" {
		return r
	}
	if r := kindRules[e.GetKind()]; r != "" {
		return r
	}
	return "?"
}

// matchBuildErrors returns got (rule(plugin) keys, sorted) with every
// error whose rule is unknown ("?(x)") replaced by a wanted key of the
// same entry's plugin not matched otherwise: a runtime whose errors carry
// neither rule IDs nor kinds is judged by which entries it refuses.
func matchBuildErrors(want []string, errs []*abkitv1.BuildError) []string {
	got := rulesOf(errs)
	left := map[string]int{}
	for _, w := range want {
		left[w]++
	}
	for _, g := range got {
		left[g]--
	}
	for i, g := range got {
		plugin, ok := strings.CutPrefix(g, "?(")
		if !ok {
			continue
		}
		plugin = strings.TrimSuffix(plugin, ")")
		same := "" // a wanted key of the plugin already matched: one problem reported twice
		for _, w := range want {
			if !strings.HasSuffix(w, "("+plugin+")") {
				continue
			}
			if left[w] > 0 {
				got[i], same = w, ""
				left[w]--
				break
			}
			same = w
		}
		if same != "" {
			got[i] = same
		}
	}
	sort.Strings(got)
	return got
}

func joinMsgs(errs []*abkitv1.BuildError) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n  " + e.GetMessage())
	}
	return b.String()
}
