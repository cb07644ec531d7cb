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
	var out []Finding
	add := func(rule, format string, args ...any) {
		out = append(out, Finding{rule, fmt.Sprintf(format, args...)})
	}
	entries := entriesOf(sc)
	behav := map[string][]string{}
	for _, p := range sc.GetPlugins() {
		behav[p.GetName()] = p.GetBehaviours()
	}
	if len(res.GetBuildErrors()) > 0 {
		if len(calls) > 0 {
			add("P6", "the build failed (%d errors), yet %d hooks were called (first %s.%s): a chain that does not build runs nothing", len(res.GetBuildErrors()), len(calls), calls[0].Probe, calls[0].Hook)
		}
		return out
	}
	if decl["P1.names"] != "repeated" {
		for name, n := range entries {
			if n > 1 {
				add("P1", "the chain names %s %d times and was built, although the runtime does not declare P1.names=repeated", name, n)
			}
		}
	}
	type key struct {
		ex    uint32
		probe string
	}
	req, fin, last, frames := map[key]int{}, map[key]int{}, map[key]int{}, map[key]int{}
	lastSeq := map[key]int{}
	init, shut := map[string]int{}, map[string]int{}
	setState := map[key][]string{}            // values a probe set, per exchange
	stateEx := map[string]map[string]uint32{} // probe → value → exchange that set it
	identSet := map[uint32]bool{}
	identEx := map[string]uint32{}
	rawFrames := decl["P19.frame"] == "" || decl["P19.frame"] == "raw-block"
	nex := uint32(len(sc.GetExchanges()))
	for _, c := range calls {
		k := key{c.Exchange, c.Probe}
		exchangeHook := c.Hook == "request" || c.Hook == "response" || c.Hook == "frame" || c.Hook == "finish"
		if exchangeHook && c.Exchange >= nex {
			add("P15", "%s.%s was called for exchange %d; the scenario has %d", c.Probe, c.Hook, c.Exchange, nex)
			continue
		}
		if exchangeHook && entries[c.Probe] == 0 {
			add("P15", "%s.%s was called, but no active entry of the chain names %s", c.Probe, c.Hook, c.Probe)
		}
		// What the hook saw, before its own reply counts.
		if c.State != nil && exchangeHook {
			if !slices.Contains(setState[k], *c.State) {
				if ex, ok := stateEx[c.Probe][*c.State]; ok && ex != c.Exchange {
					add("P31", "%s.%s of exchange %d saw state %q, set in exchange %d: state must not cross exchanges", c.Probe, c.Hook, c.Exchange, *c.State, ex)
				} else {
					add("P31", "%s.%s of exchange %d saw state %q that no hook of the exchange set", c.Probe, c.Hook, c.Exchange, *c.State)
				}
			}
		}
		if c.Identity != "" && exchangeHook && !identSet[c.Exchange] {
			if ex, ok := identEx[c.Identity]; ok && ex != c.Exchange {
				add("P36", "%s.%s of exchange %d saw the identity set in exchange %d: an identity must not cross exchanges", c.Probe, c.Hook, c.Exchange, ex)
			} else {
				add("P36", "%s.%s of exchange %d saw an identity no hook of the exchange set", c.Probe, c.Hook, c.Exchange)
			}
		}
		switch c.Hook {
		case "request":
			req[k]++
		case "finish":
			fin[k]++
		case "frame":
			if c.Last {
				last[k]++
				lastSeq[k] = c.Seq
			} else {
				if last[k] >= entries[c.Probe] && last[k] > 0 {
					add("P21", "%s got frame %d of exchange %d after its last=true call: the closing call is the plugin's final frame call", c.Probe, c.FrameIndex, c.Exchange)
				}
				frames[k]++
				if rawFrames && c.Frame != "" && !(strings.HasSuffix(c.Frame, "\n\n") || strings.HasSuffix(c.Frame, "\r\n\r\n") || strings.HasSuffix(c.Frame, "\r\r") || strings.HasSuffix(c.Frame, "\n\r\n") || strings.HasSuffix(c.Frame, "\r\n\n") || strings.HasSuffix(c.Frame, "\r\r\n") || strings.HasSuffix(c.Frame, "\n\r")) &&
					int(c.Exchange) < len(res.GetExchanges()) && res.GetExchanges()[c.Exchange].GetStreamed() {
					add("P19", "%s frame %d of exchange %d is %q, not a complete event (P19.frame=raw-block: the block with its blank line)", c.Probe, c.FrameIndex, c.Exchange, c.Frame)
				}
			}
		case "init":
			init[c.Probe]++
		case "shutdown":
			shut[c.Probe]++
		}
		if r := c.Reply; r != nil && exchangeHook {
			if r.GetSetState() {
				setState[k] = append(setState[k], r.GetState())
				if stateEx[c.Probe] == nil {
					stateEx[c.Probe] = map[string]uint32{}
				}
				if _, ok := stateEx[c.Probe][r.GetState()]; !ok {
					stateEx[c.Probe][r.GetState()] = c.Exchange
				}
			}
			if len(r.GetSetIdentityJson()) > 0 {
				identSet[c.Exchange] = true
			}
		}
		if c.Identity != "" {
			if _, ok := identEx[c.Identity]; !ok {
				identEx[c.Identity] = c.Exchange
			}
		}
	}
	for k, n := range req {
		if n > entries[k.probe] {
			add("P15", "%s got OnRequest %d times in exchange %d; the chain names it %d times", k.probe, n, k.ex, entries[k.probe])
		}
		if f := fin[k]; f > n {
			add("P26", "%s got OnFinish %d times in exchange %d for %d OnRequest calls: OnFinish runs exactly once per plugin whose OnRequest ran", k.probe, f, k.ex, n)
		} else if f < n && slices.Contains(behav[k.probe], "finish") && int(k.ex) < len(res.GetExchanges()) {
			add("P26", "%s got OnRequest in exchange %d but OnFinish %d times for %d OnRequest calls: every plugin whose OnRequest ran finishes, once", k.probe, k.ex, f, n)
		}
		if l := last[k]; l > n {
			add("P21", "%s got %d last=true calls in exchange %d: exactly one per streaming plugin", k.probe, l, k.ex)
		} else if frames[k] > 0 && l == 0 && int(k.ex) < len(res.GetExchanges()) {
			add("P21", "%s got %d frames of exchange %d but no last=true call: the closing call is owed after every stream", k.probe, frames[k], k.ex)
		}
	}
	for k, f := range fin {
		if req[k] == 0 && f > 0 {
			add("P26", "%s got OnFinish in exchange %d without OnRequest: only plugins whose OnRequest ran finish", k.probe, k.ex)
		}
	}
	for p, n := range init {
		if n > entries[p] {
			add("P12", "%s got Init %d times; the chain names it %d times: Init runs once per plugin", p, n, entries[p])
		}
	}
	for p, n := range shut {
		owed := init[p]
		if !slices.Contains(behav[p], "init") {
			owed = entries[p]
		}
		if n > owed {
			add("P13", "%s got Shutdown %d times after %d Init calls: Shutdown runs once, on the started plugins", p, n, init[p])
		}
	}
	sortFindings(out)
	return out
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
