package runtimesuite

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// The runtime monitors run on every scenario of every runtime case (and of
// every explored scenario), whatever the case itself checks: a case checks
// the condition it was written for, a monitor the obligations every run
// has. Exactly-once calls are at most once (and OnFinish and the closing
// frame call are not left out once owed); no state or identity crosses
// from one exchange to another; no hook runs after a failed build; what
// the runtime declared in DescribeRuntime (its families' points, the
// alternatives it takes) agrees with what the probes saw. A finding fails
// the case it happened in and cites its rule, at "monitor".

// Finding is one thing a monitor saw wrong.
type Finding struct {
	Rule, Message string
}

// report hands the findings to the case: one line per kind of finding
// (the same message but for exchange and frame numbers), counting the
// others, so that a fault seen in every exchange of a case reads once.
func report(t *conformance.T, fs []Finding) {
	var order []string
	first := map[string]Finding{}
	more := map[string]int{}
	for _, f := range fs {
		k := f.Rule + " " + numbers.ReplaceAllString(f.Message, "$1 #")
		if _, ok := first[k]; !ok {
			order = append(order, k)
			first[k] = f
			continue
		}
		more[k]++
	}
	for _, k := range order {
		f := first[k]
		if n := more[k]; n > 0 {
			t.ErrorAt(f.Rule, "monitor", "%s (and %d more like it)", f.Message, n)
			continue
		}
		t.ErrorAt(f.Rule, "monitor", "%s", f.Message)
	}
}

// sortFindings orders findings by rule and message: the monitors collect
// counts in maps, and a report must read the same from run to run.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Rule != fs[j].Rule {
			return fs[i].Rule < fs[j].Rule
		}
		return fs[i].Message < fs[j].Message
	})
}

var numbers = regexp.MustCompile(`(exchange|frame|p) [0-9]+`)

// entriesOf counts the active (not off) entries naming each plugin.
func entriesOf(sc *abkitv1.PipelineScenario) map[string]int {
	n := map[string]int{}
	for _, e := range sc.GetEntries() {
		if e.GetOnError() != "off" {
			n[e.GetPlugin()]++
		}
	}
	return n
}

// MonitorPipeline checks one pipeline scenario's calls and answer against
// the obligations of every run; decl is the runtime's declared
// alternatives.
func MonitorPipeline(sc *abkitv1.PipelineScenario, calls []Call, res *abkitv1.PipelineRun, decl map[string]string) []Finding {
	m := &pipeMonitor{sc: sc, res: res, entries: entriesOf(sc), behav: map[string][]string{},
		req: map[pipeKey]int{}, fin: map[pipeKey]int{}, last: map[pipeKey]int{}, frames: map[pipeKey]int{},
		init: map[string]int{}, shut: map[string]int{}, setState: map[pipeKey][]string{}, stateEx: map[string]map[string]uint32{},
		identSet: map[uint32]bool{}, identEx: map[string]uint32{},
		rawFrames: decl["P19.frame"] == "" || decl["P19.frame"] == "raw-block", nex: uint32(len(sc.GetExchanges()))}
	for _, p := range sc.GetPlugins() {
		m.behav[p.GetName()] = p.GetBehaviours()
	}
	if len(res.GetBuildErrors()) > 0 {
		if len(calls) > 0 {
			m.add("P6", "the build failed (%d errors), yet %d hooks were called (first %s.%s): a chain that does not build runs nothing", len(res.GetBuildErrors()), len(calls), calls[0].Probe, calls[0].Hook)
		}
		return m.out
	}
	if decl["P1.names"] != "repeated" {
		for name, n := range m.entries {
			if n > 1 {
				m.add("P1", "the chain names %s %d times and was built, although the runtime does not declare P1.names=repeated", name, n)
			}
		}
	}
	for _, c := range calls {
		m.observe(c)
	}
	m.exchangeCounts()
	m.lifecycleCounts()
	sortFindings(m.out)
	return m.out
}

type pipeKey struct {
	ex    uint32
	probe string
}

// pipeMonitor is MonitorPipeline's state over one scenario's calls.
type pipeMonitor struct {
	sc      *abkitv1.PipelineScenario
	res     *abkitv1.PipelineRun
	entries map[string]int
	behav   map[string][]string
	out     []Finding

	req, fin, last, frames map[pipeKey]int
	init, shut             map[string]int
	setState               map[pipeKey][]string         // values a probe set, per exchange
	stateEx                map[string]map[string]uint32 // probe → value → exchange that set it
	identSet               map[uint32]bool
	identEx                map[string]uint32
	rawFrames              bool
	nex                    uint32
}

func (m *pipeMonitor) add(rule, format string, args ...any) {
	m.out = append(m.out, Finding{rule, fmt.Sprintf(format, args...)})
}

func isExchangeHook(hook string) bool {
	return hook == "request" || hook == "response" || hook == "frame" || hook == "finish"
}

// observe checks one call and counts it.
func (m *pipeMonitor) observe(c Call) {
	k := pipeKey{c.Exchange, c.Probe}
	exchangeHook := isExchangeHook(c.Hook)
	if exchangeHook && c.Exchange >= m.nex {
		m.add("P15", "%s.%s was called for exchange %d; the scenario has %d", c.Probe, c.Hook, c.Exchange, m.nex)
		return
	}
	if exchangeHook && m.entries[c.Probe] == 0 {
		m.add("P15", "%s.%s was called, but no active entry of the chain names %s", c.Probe, c.Hook, c.Probe)
	}
	if exchangeHook {
		m.sawCrossing(c, k)
	}
	switch c.Hook {
	case "request":
		m.req[k]++
	case "finish":
		m.fin[k]++
	case "frame":
		m.frame(c, k)
	case "init":
		m.init[c.Probe]++
	case "shutdown":
		m.shut[c.Probe]++
	}
	if r := c.Reply; r != nil && exchangeHook {
		if r.GetSetState() {
			m.setState[k] = append(m.setState[k], r.GetState())
			if m.stateEx[c.Probe] == nil {
				m.stateEx[c.Probe] = map[string]uint32{}
			}
			if _, ok := m.stateEx[c.Probe][r.GetState()]; !ok {
				m.stateEx[c.Probe][r.GetState()] = c.Exchange
			}
		}
		if len(r.GetSetIdentityJson()) > 0 {
			m.identSet[c.Exchange] = true
		}
	}
	if c.Identity != "" {
		if _, ok := m.identEx[c.Identity]; !ok {
			m.identEx[c.Identity] = c.Exchange
		}
	}
}

// sawCrossing checks what an exchange hook saw of state and identity,
// before its own reply counts (P31, P36).
func (m *pipeMonitor) sawCrossing(c Call, k pipeKey) {
	if c.State != nil && !slices.Contains(m.setState[k], *c.State) {
		if ex, ok := m.stateEx[c.Probe][*c.State]; ok && ex != c.Exchange {
			m.add("P31", "%s.%s of exchange %d saw state %q, set in exchange %d: state must not cross exchanges", c.Probe, c.Hook, c.Exchange, *c.State, ex)
		} else {
			m.add("P31", "%s.%s of exchange %d saw state %q that no hook of the exchange set", c.Probe, c.Hook, c.Exchange, *c.State)
		}
	}
	if c.Identity != "" && !m.identSet[c.Exchange] {
		if ex, ok := m.identEx[c.Identity]; ok && ex != c.Exchange {
			m.add("P36", "%s.%s of exchange %d saw the identity set in exchange %d: an identity must not cross exchanges", c.Probe, c.Hook, c.Exchange, ex)
		} else {
			m.add("P36", "%s.%s of exchange %d saw an identity no hook of the exchange set", c.Probe, c.Hook, c.Exchange)
		}
	}
}

// completeBlock reports whether frame ends with an SSE block's blank line.
func completeBlock(frame string) bool {
	for _, end := range []string{"\n\n", "\r\n\r\n", "\r\r", "\n\r\n", "\r\n\n", "\r\r\n", "\n\r"} {
		if strings.HasSuffix(frame, end) {
			return true
		}
	}
	return false
}

// frame checks one frame call (P19, P21).
func (m *pipeMonitor) frame(c Call, k pipeKey) {
	if c.Last {
		m.last[k]++
		return
	}
	if m.last[k] >= m.entries[c.Probe] && m.last[k] > 0 {
		m.add("P21", "%s got frame %d of exchange %d after its last=true call: the closing call is the plugin's final frame call", c.Probe, c.FrameIndex, c.Exchange)
	}
	m.frames[k]++
	xs := m.res.GetExchanges()
	if m.rawFrames && c.Frame != "" && !completeBlock(c.Frame) && int(c.Exchange) < len(xs) && xs[c.Exchange].GetStreamed() {
		m.add("P19", "%s frame %d of exchange %d is %q, not a complete event (P19.frame=raw-block: the block with its blank line)", c.Probe, c.FrameIndex, c.Exchange, c.Frame)
	}
}

// exchangeCounts checks the per-exchange counts: requests, finishes and
// closing calls (P15, P21, P26).
func (m *pipeMonitor) exchangeCounts() {
	nres := len(m.res.GetExchanges())
	for k, n := range m.req {
		if n > m.entries[k.probe] {
			m.add("P15", "%s got OnRequest %d times in exchange %d; the chain names it %d times", k.probe, n, k.ex, m.entries[k.probe])
		}
		if f := m.fin[k]; f > n {
			m.add("P26", "%s got OnFinish %d times in exchange %d for %d OnRequest calls: OnFinish runs exactly once per plugin whose OnRequest ran", k.probe, f, k.ex, n)
		} else if f < n && slices.Contains(m.behav[k.probe], "finish") && int(k.ex) < nres {
			m.add("P26", "%s got OnRequest in exchange %d but OnFinish %d times for %d OnRequest calls: every plugin whose OnRequest ran finishes, once", k.probe, k.ex, f, n)
		}
		if l := m.last[k]; l > n {
			m.add("P21", "%s got %d last=true calls in exchange %d: exactly one per streaming plugin", k.probe, l, k.ex)
		} else if m.frames[k] > 0 && l == 0 && int(k.ex) < nres {
			m.add("P21", "%s got %d frames of exchange %d but no last=true call: the closing call is owed after every stream", k.probe, m.frames[k], k.ex)
		}
	}
	for k, f := range m.fin {
		if m.req[k] == 0 && f > 0 {
			m.add("P26", "%s got OnFinish in exchange %d without OnRequest: only plugins whose OnRequest ran finish", k.probe, k.ex)
		}
	}
}

// lifecycleCounts checks Init and Shutdown counts (P12, P13).
func (m *pipeMonitor) lifecycleCounts() {
	for p, n := range m.init {
		if n > m.entries[p] {
			m.add("P12", "%s got Init %d times; the chain names it %d times: Init runs once per plugin", p, n, m.entries[p])
		}
	}
	for p, n := range m.shut {
		owed := m.init[p]
		if !slices.Contains(m.behav[p], "init") {
			owed = m.entries[p]
		}
		if n > owed {
			m.add("P13", "%s got Shutdown %d times after %d Init calls: Shutdown runs once, on the started plugins", p, n, m.init[p])
		}
	}
}

// eventOnly reports whether point is one of D1's event-only points.
func eventOnly(point string) bool {
	return slices.ContainsFunc(events, func(e struct{ point, payload string }) bool { return e.point == point })
}

// MonitorIntercept checks one dispatcher scenario's calls: every call is
// at the scenario's point, no extension is asked more than once per
// dispatch and registration, none is told an event twice, an event-only
// point asks for no decision, and a nameless contribution is never
// called.
func MonitorIntercept(sc *abkitv1.InterceptScenario, calls []Call) []Finding {
	var out []Finding
	add := func(rule, format string, args ...any) {
		out = append(out, Finding{rule, fmt.Sprintf(format, args...)})
	}
	reg := map[string]int{}
	for _, e := range sc.GetExtensions() {
		reg[e.GetName()]++
	}
	rep := int(sc.GetRepeat())
	if rep == 0 {
		rep = 1
	}
	asked, told := map[string]int{}, map[string]int{}
	for _, c := range calls {
		if c.Probe == "" {
			add("D5", "the nameless contribution was called (%s): a contribution without a plugin ID is skipped", c.Hook)
		}
		if c.Point != "" && c.Point != sc.GetPoint() {
			add("D1", "%s.%s was called at point %s during a dispatch at %s", c.Probe, c.Hook, c.Point, sc.GetPoint())
		}
		switch c.Hook {
		case "intercept":
			asked[c.Probe]++
			if eventOnly(sc.GetPoint()) {
				add("D1", "%s was asked for a decision at the event-only point %s", c.Probe, sc.GetPoint())
			}
		case "notify":
			told[c.Probe]++
		}
	}
	for p, n := range asked {
		if n > reg[p]*rep {
			add("D4", "%s was asked %d times in %d dispatches with %d registrations: each registration is asked at most once per dispatch", p, n, rep, reg[p])
		}
	}
	for p, n := range told {
		if n > reg[p]*rep {
			add("D20", "%s got %d events for %d dispatches with %d registrations: each event goes out at most once", p, n, rep, reg[p])
		}
	}
	sortFindings(out)
	return out
}

// MonitorHooks checks one hook-bus scenario's calls: no hook runs more
// often than it is registered.
func MonitorHooks(sc *abkitv1.HookScenario, calls []Call) []Finding {
	var out []Finding
	reg := map[string]int{}
	for _, h := range sc.GetHooks() {
		reg[h.GetName()]++
	}
	n := map[string]int{}
	for _, c := range calls {
		n[c.Probe]++
	}
	for p, k := range n {
		if k > reg[p] {
			out = append(out, Finding{"H1", fmt.Sprintf("hook %s ran %d times in one chain with %d registrations: each runs once", p, k, reg[p])})
		}
	}
	sortFindings(out)
	return out
}

// declared is the case's runtime's declared alternatives.
func declared(t *conformance.T) map[string]string { return t.Describe().Alternatives }
