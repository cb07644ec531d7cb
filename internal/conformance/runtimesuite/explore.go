package runtimesuite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/sse"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// Exploration runs generated scenarios on the runtime under test and on
// abkit's reference and compares everything the runtime protocol lets one
// observe: every probe call in order with what the hook saw, and the
// runtime's answer. The first event that differs names the rule it belongs
// to; the scenario is then shrunk (parts removed one at a time while the
// difference of that rule stays) and reported so that it can be rerun.

// Event is one observable thing of a run and the rule it belongs to.
type Event struct {
	Rule string `json:"rule"`
	Text string `json:"text"`
	// Hint is a choice point the event also belongs to (see
	// Difference.hint).
	Hint string `json:"hint,omitempty"`
}

// Observation is what one runtime did with one scenario.
type Observation struct {
	Events   []Event
	Findings []Finding
	build    []*abkitv1.BuildError
	Err      error
}

// scenarioTimeout bounds one scenario's run on one runtime: only a hang
// reaches it.
const scenarioTimeout = 30 * time.Second

// Observe runs x on r. as is the tested runtime's declared alternatives:
// the reference's frames are rendered as the tested runtime declares
// frames (P19.frame) when convert is set.
func Observe(ctx context.Context, r *Runtime, x *XScenario, as map[string]string, convert bool) Observation {
	ctx, cancel := context.WithTimeout(ctx, scenarioTimeout)
	defer cancel()
	s := &Session{r: r}
	defer s.Close()
	var o Observation
	switch {
	case x.Pipeline != nil:
		sc := x.Pipeline.proto(s)
		res, err := s.RPC().RunPipeline(ctx, sc)
		if err != nil {
			o.Err = err
			return o
		}
		calls := s.Calls()
		o.Findings = MonitorPipeline(sc, calls, res, r.desc.Alternatives)
		o.build = res.GetBuildErrors()
		o.Events = pipelineEvents(x.Pipeline, calls, res, as, convert)
	case x.Intercept != nil:
		sc := x.Intercept.proto(s)
		res, err := s.RPC().RunIntercept(ctx, sc)
		if err != nil {
			o.Err = err
			return o
		}
		calls := s.Calls()
		o.Findings = MonitorIntercept(sc, calls)
		o.Events = interceptEvents(calls, res)
	default:
		sc := x.Hooks.proto(s)
		res, err := s.RPC().RunHooks(ctx, sc)
		if err != nil {
			o.Err = err
			return o
		}
		calls := s.Calls()
		o.Findings = MonitorHooks(sc, calls)
		o.Events = hookEvents(calls, res)
	}
	return o
}

var hookRule = map[string]string{"request": "P15", "response": "P16", "frame": "P20", "last": "P21", "finish": "P27",
	"init": "P12", "shutdown": "P13", "ready": "P14"}

// xHeaders renders the X- headers of h (the ones probes and scenarios
// set; hosts add others of their own), sorted.
func xHeaders(h http.Header) string {
	var out []string
	for n, v := range h {
		if strings.HasPrefix(strings.ToLower(n), "x-") {
			out = append(out, http.CanonicalHeaderKey(n)+"="+strings.Join(v, ","))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func strp(p *string) string {
	if p == nil {
		return "<none>"
	}
	return fmt.Sprintf("%q", *p)
}

func bodyOf(p *string) string {
	if p == nil || *p == "" {
		return "<none>"
	}
	return fmt.Sprintf("%q", *p)
}

// canon is JSON with keys sorted and zero-valued top-level fields left
// out (D8: an omitted field is zero), or the text quoted when it is not
// JSON.
func canon(s string) string {
	if s == "" {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return fmt.Sprintf("%q", s)
	}
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			if x == nil || x == false || x == "" || x == 0.0 {
				delete(m, k)
			}
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func pipelineEvents(p *XPipeline, calls []Call, res *abkitv1.PipelineRun, as map[string]string, convert bool) []Event {
	// The build's errors come first and are compared apart (see compare).
	l := &eventList{ev: []Event{{Rule: "P6", Text: "build"}}}
	// Concurrent Ready calls come in no fixed order: they are compared as
	// a sorted set, where they happened.
	var ready []string
	flushReady := func() {
		sort.Strings(ready)
		for _, r := range ready {
			l.add("P14", "%s", r)
		}
		ready = nil
	}
	for _, c := range calls {
		hook := c.Hook
		if hook == "frame" && c.Last {
			hook = "last"
		}
		if hook == "ready" {
			ready = append(ready, c.Probe+".ready")
			continue
		}
		flushReady()
		l.call(c, hook, as, convert)
	}
	flushReady()
	l.run(p, res)
	return l.ev
}

// eventList collects a scenario's events.
type eventList struct{ ev []Event }

func (l *eventList) add(rule, format string, args ...any) {
	l.ev = append(l.ev, Event{Rule: rule, Text: fmt.Sprintf(format, args...)})
}

// hint marks the last event as following the choice point h.
func (l *eventList) hint(h string) { l.ev[len(l.ev)-1].Hint = h }

// call adds the events of one hook call (hook is "last" for the closing
// frame call).
func (l *eventList) call(c Call, hook string, as map[string]string, convert bool) {
	base := fmt.Sprintf("ex%d %s.%s", c.Exchange, c.Probe, hook)
	switch hook {
	case "init", "shutdown":
		base = c.Probe + "." + hook
	case "frame":
		base = fmt.Sprintf("ex%d %s.frame%d", c.Exchange, c.Probe, c.FrameIndex)
	}
	l.add(hookRule[hook], "%s", base)
	switch hook {
	case "frame":
		f := c.Frame
		if convert && as["P19.frame"] == "data-payload" {
			f = sse.Parse([]byte(f)).Data
		}
		l.add("P19", "%s frame %q", base, f)
	case "last":
		l.add("P21", "%s frame %q", base, c.Frame)
	case "finish":
		l.add("P29", "%s outcome %s %d %s", base, c.Outcome.GetKind(), c.Outcome.GetStatus(), c.Outcome.GetDeniedBy())
		l.hint("P15.reject-status")
		l.add("P28", "%s context done %v", base, c.CtxDone)
	case "request", "response":
		if c.Outcome != nil {
			l.add("P29", "%s saw an outcome", base)
		}
	}
	if hook == "init" || hook == "shutdown" {
		return
	}
	l.add("P31", "%s state %s", base, strp(c.State))
	// Bodies are what P11 hands the hooks before finish; an empty
	// body and none read alike (the contract does not tell them
	// apart).
	if hook != "finish" {
		l.add("P11", "%s request body %s", base, bodyOf(c.ReqBody))
	}
	if hook != "request" && hook != "finish" {
		l.add("P11", "%s response body %s", base, bodyOf(c.RespBody))
	}
	if hook != "request" {
		l.add("P33", "%s response header %s", base, xHeaders(c.RespHeader))
	}
	l.add("P32", "%s request header %s", base, xHeaders(c.ReqHeader))
	l.add("P36", "%s identity %s", base, canon(c.Identity))
}

// run adds the events of the run's results: start, readiness, stop and
// each exchange.
func (l *eventList) run(p *XPipeline, res *abkitv1.PipelineRun) {
	l.add("P12", "start error %v", res.GetStartError() != "")
	nr := 0
	for _, e := range res.GetReadyErrors() {
		if e != "" {
			nr++
		}
	}
	l.add("P14", "%d of %d ready answers not ready", nr, len(res.GetReadyErrors()))
	l.add("P13", "stop error %v", res.GetStopError() != "")
	l.add("P15", "%d exchange results", len(res.GetExchanges()))
	for i, e := range res.GetExchanges() {
		x := XExchange{}
		if i < len(p.Exchanges) {
			x = p.Exchanges[i]
		}
		l.exchange(i, x, e)
	}
}

// exchange adds the events of one exchange's result.
func (l *eventList) exchange(i int, x XExchange, e *abkitv1.ExchangeRun) {
	rule := "P15"
	if x.Upstream == "error" {
		rule = "P16"
	}
	o := e.GetOutcome()
	l.add(rule, "ex%d outcome %s %d denied by %q", i, o.GetKind(), o.GetStatus(), o.GetDeniedBy())
	l.hint("P15.reject-status")
	l.add(rule, "ex%d client status %d", i, e.GetStatus())
	l.hint("P15.deny-wire")
	l.add("P15", "ex%d cancelled %v", i, e.GetCancelled())
	l.add("P18", "ex%d streamed %v", i, e.GetStreamed())
	l.add("P19", "ex%d frames %d", i, e.GetFrames())
	// What the client gets of a denial or an error is a choice
	// (P15.deny-wire) and, for an error, only its status is a rule.
	switch {
	case e.GetStreamed():
		l.add("P19", "ex%d client stream %q", i, eventData(e.GetBody()))
	case o.GetKind() == "allow":
		l.add("P17", "ex%d client body %q", i, strings.TrimSpace(string(e.GetBody())))
	case o.GetKind() == "deny":
		l.add("P15", "ex%d client body %q", i, strings.TrimSpace(string(e.GetBody())))
		l.hint("P15.deny-wire")
	}
	l.add("P17", "ex%d upstream called %v, request body %q", i, e.GetUpstreamCalled(), e.GetRequestBody())
	l.add("P32", "ex%d upstream header %s", i, xHeaders(abkitv1.HeaderFromProto(e.GetUpstreamHeader())))
	l.add("P33", "ex%d client header %s", i, xHeaders(abkitv1.HeaderFromProto(e.GetHeader())))
	// Only the warnings a rule asks for are compared: a runtime may
	// warn about more.
	var ws []string
	for _, w := range e.GetWarnings() {
		if slices.Contains(owedWarnings, w.GetRule()) {
			ws = append(ws, w.GetRule())
		}
	}
	sort.Strings(ws)
	wr := "P30"
	if len(ws) > 0 && ws[0] != "" {
		wr = ws[0]
	}
	l.add(wr, "ex%d warnings by rule %v", i, ws)
}

// owedWarnings are the rules whose warnings the contracts ask for: a
// replaced reject status, an undeclared write, an unterminated final
// block, a write during or a second finish and an abandoned finisher, a
// refused header change.
var owedWarnings = []string{"P15", "P17", "P19", "P30", "P33"}

func interceptEvents(calls []Call, res *abkitv1.InterceptRun) []Event {
	var ev []Event
	add := func(rule, format string, args ...any) {
		ev = append(ev, Event{Rule: rule, Text: fmt.Sprintf(format, args...)})
	}
	add("D18", "build failed %v", res.GetBuildError() != "")
	var notes []string
	for _, c := range calls {
		if c.Hook == "notify" {
			notes = append(notes, c.Probe+".notify "+canon(c.Payload))
			continue
		}
		add("D4", "%s.%s", c.Probe, c.Hook)
		add("D8", "%s saw %s", c.Probe, canon(c.Payload))
	}
	sort.Strings(notes)
	for _, n := range notes {
		add("D20", "%s", n)
	}
	for i, g := range res.GetResults() {
		add("D2", "result %d host error %v", i, g.GetError() != "")
		f := g.GetFailure()
		add("D13", "result %d failure %q %s", i, f.GetExtension(), f.GetPhase())
		add("D7", "result %d blocked %v by %q in %q, reason %q", i, g.GetBlocked(), g.GetBlockedBy(), g.GetBlockPhase(), g.GetReason())
		add("D8", "result %d payload %s replaced by %v", i, canon(string(g.GetPayloadJson())), g.GetReplaced())
		add("D11", "result %d changed %v", i, g.GetChanged())
		add("D9", "result %d permission %q decided by %q", i, g.GetPermission(), g.GetDecidedBy())
		add("D10", "result %d audit notes %v", i, len(g.GetNotes()) > 0)
		add("D13", "result %d warnings %d", i, len(g.GetWarnings()))
	}
	// Warnings about event delivery belong to D20 (and its choice
	// D20.notify), the others to D15.
	var ws, es []string
	for _, w := range res.GetWarnings() {
		if strings.HasPrefix(w.GetKind(), "event") {
			es = append(es, w.GetExtension()+":"+w.GetKind())
		} else {
			ws = append(ws, w.GetExtension()+":"+w.GetKind())
		}
	}
	sort.Strings(ws)
	sort.Strings(es)
	add("D15", "dispatcher warnings %v", ws)
	add("D20", "event delivery warnings %v", es)
	return ev
}

func hookEvents(calls []Call, res *abkitv1.HookRun) []Event {
	var ev []Event
	add := func(rule, format string, args ...any) {
		ev = append(ev, Event{Rule: rule, Text: fmt.Sprintf(format, args...)})
	}
	add("H1", "build failed %v", res.GetBuildError() != "")
	for _, c := range calls {
		add("H1", "%s.%s", c.Probe, c.Hook)
		add("H2", "%s saw %s", c.Probe, canon(c.Value))
	}
	f := res.GetFailure()
	rule := "H3"
	if f.GetKind() == "reject" {
		rule = "H4"
	}
	add(rule, "failure %q by %q", f.GetKind(), f.GetHook())
	var errs []string
	for _, e := range res.GetErrors() {
		errs = append(errs, e.GetHook()+":"+e.GetKind())
	}
	add("H2", "recorded errors %v", errs)
	add("H5", "swallowed %v by %q", res.GetSwallowed(), res.GetSwallowedBy())
	add("H2", "output %s", canon(string(res.GetOutputJson())))
	return ev
}

// Difference is the first thing the runtime under test did otherwise than
// the reference, or a monitor finding on it.
type Difference struct {
	Rule string `json:"rule"`
	// Choice is set when the runtime declares an alternative other than
	// the reference's at a choice point of Rule: the difference may be
	// that alternative, and counts only with --strict.
	Choice string `json:"choice,omitempty"`
	// Want is the reference's event, Got the runtime's ("" when its run
	// had no such event); Monitor is set for a monitor finding.
	Want    string `json:"reference,omitempty"`
	Got     string `json:"runtime,omitempty"`
	Monitor bool   `json:"monitor,omitempty"`
	// hint is a choice point the event belongs to beyond those of Rule
	// (how many build errors a build reports is P6.build-errors, whatever
	// rule the first differing error cites).
	hint string
}

func (d *Difference) String() string {
	s := d.Rule
	if d.Choice != "" {
		s += " [choice " + d.Choice + " declared otherwise]"
	}
	if d.Monitor {
		return s + ": monitor: " + d.Got
	}
	return fmt.Sprintf("%s: first differing event\n  reference: %s\n  runtime:   %s", s, orDash(d.Want), orDash(d.Got))
}

func orDash(s string) string {
	if s == "" {
		return "(no such event)"
	}
	return s
}

// compare returns the first difference between the reference's and the
// tested runtime's observations, or nil.
func compare(ref, got Observation, decl map[string]string) *Difference {
	if got.Err != nil {
		return &Difference{Rule: "P15", Got: "the runtime failed to run the scenario: " + got.Err.Error()}
	}
	d := firstDiff(ref, got)
	if d == nil {
		for _, f := range got.Findings {
			if !slices.ContainsFunc(ref.Findings, func(r Finding) bool { return r.Rule == f.Rule }) {
				d = &Difference{Rule: f.Rule, Got: f.Message, Monitor: true}
				break
			}
		}
	}
	if d != nil {
		for _, cp := range conformance.ChoicePoints() {
			if a, ok := decl[cp.ID]; ok && (cp.Rule == d.Rule || cp.ID == d.hint) && a != cp.Reference {
				d.Choice = cp.ID + "=" + a
			}
		}
	}
	return d
}

func firstDiff(ref, got Observation) *Difference {
	for i := 0; i < len(ref.Events) || i < len(got.Events); i++ {
		var w, g Event
		if i < len(ref.Events) {
			w = ref.Events[i]
		}
		if i < len(got.Events) {
			g = got.Events[i]
		}
		if w.Text == "build" && g.Text == "build" {
			want := rulesOf(ref.build)
			sort.Strings(want)
			want = slices.Compact(want)
			have := slices.Compact(matchBuildErrors(want, got.build))
			if !slices.Equal(want, have) {
				rule := "P6"
				for _, k := range append(symDiff(want, have), "") {
					if r, _, ok := strings.Cut(k, "("); ok && r != "?" {
						rule = r
						break
					}
				}
				return &Difference{Rule: rule, Want: fmt.Sprintf("build errors %v", want), Got: fmt.Sprintf("build errors %v", have), hint: "P6.build-errors"}
			}
			continue
		}
		if w.Text != g.Text {
			hint := w.Hint
			if hint == "" {
				hint = g.Hint
			}
			return &Difference{Rule: blame(ref.Events[i:], got.Events[i:]), Want: w.Text, Got: g.Text, hint: hint}
		}
	}
	return nil
}

// blame is the rule of the first differing event: the runtime's own
// event when it inserted one (the reference's event comes later in its
// run), else the reference's event it left out or changed.
func blame(ref, got []Event) string {
	if len(ref) == 0 {
		return got[0].Rule
	}
	if len(got) == 0 {
		return ref[0].Rule
	}
	later := func(es []Event, t string) bool {
		return slices.ContainsFunc(es[1:], func(e Event) bool { return e.Text == t })
	}
	if later(got, ref[0].Text) && !later(ref, got[0].Text) {
		return got[0].Rule
	}
	return ref[0].Rule
}

func symDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// Explorer runs scenarios on the runtime under test and the reference.
type Explorer struct {
	Test, Ref *Runtime
	// Strict counts differences at choices the runtime declares otherwise.
	Strict bool
	// ShrinkTrials bounds the runs of one shrink; zero means 300.
	ShrinkTrials int
	// Fresh, if set, starts another copy of the runtime under test: a
	// shrunk scenario is replayed on it to tell a scenario that differs
	// on its own from one that needs the earlier runs (state the runtime
	// kept across scenarios).
	Fresh func(ctx context.Context) (*Runtime, error)
}

// Check runs x on both runtimes at once and compares.
func (e *Explorer) Check(ctx context.Context, x *XScenario) (*Difference, Observation, Observation) {
	decl := e.Test.desc.Alternatives
	var ref, got Observation
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); ref = Observe(ctx, e.Ref, x, decl, true) }()
	got = Observe(ctx, e.Test, x, decl, false)
	wg.Wait()
	if ref.Err != nil {
		msg := "the reference failed to run the scenario: " + ref.Err.Error()
		if err := e.Ref.Exited(); err != nil {
			msg += "\n" + err.Error()
		}
		return &Difference{Rule: "?", Want: msg}, ref, got
	}
	if got.Err != nil {
		if err := e.Test.Exited(); err != nil {
			got.Err = fmt.Errorf("%w\n%s", got.Err, err)
			e.relaunch(ctx)
		}
	}
	return compare(ref, got, decl), ref, got
}

// relaunch replaces a runtime under test that exited with a fresh copy
// (Fresh), so that the scenarios after a crash, and the shrinking of the
// one that crashed it, run on a live runtime.
func (e *Explorer) relaunch(ctx context.Context) {
	if e.Fresh == nil {
		return
	}
	r, err := e.Fresh(ctx)
	if err != nil {
		return
	}
	e.Test.Close()
	e.Test = r
}

// Counts reports whether d fails the exploration.
func (e *Explorer) Counts(d *Difference) bool { return d != nil && (d.Choice == "" || e.Strict) }

// Shrink removes parts of x while a difference of the same rule stays,
// and returns the smallest scenario found, its difference and the runs
// it took.
func (e *Explorer) Shrink(ctx context.Context, x *XScenario, d *Difference) (*XScenario, *Difference, int) {
	budget := e.ShrinkTrials
	if budget <= 0 {
		budget = 300
	}
	trials := 0
	for progress := true; progress && trials < budget && ctx.Err() == nil; {
		progress = false
		for _, c := range candidates(x) {
			if trials >= budget || ctx.Err() != nil {
				break
			}
			trials++
			if nd, _, _ := e.Check(ctx, c); nd != nil && nd.Rule == d.Rule && nd.Monitor == d.Monitor {
				x, d, progress = c, nd, true
				break
			}
		}
	}
	return x, d, trials
}

// candidates are x with one part removed or simplified, the largest cuts
// first.
func candidates(x *XScenario) []*XScenario {
	c := &cuts{x: x}
	if p := x.Pipeline; p != nil {
		c.pipelineDrops(p)
		c.pipelineSimplifications(p)
		c.exchangeSimplifications(p)
	}
	if d := x.Intercept; d != nil {
		c.interceptCuts(d)
	}
	if h := x.Hooks; h != nil {
		c.hookCuts(h)
	}
	return c.out
}

// cuts collects the candidates of one scenario, in the order tried.
type cuts struct {
	x   *XScenario
	out []*XScenario
}

// try keeps a copy of the scenario that f changed (f reports whether it
// changed anything).
func (c *cuts) try(f func(y *XScenario) bool) {
	y := c.x.clone()
	if f(y) {
		c.out = append(c.out, y)
	}
}

// pipelineDrops removes halves, exchanges, plugins and entries.
func (c *cuts) pipelineDrops(p *XPipeline) {
	if n := len(p.Plugins); n > 3 {
		c.try(func(y *XScenario) bool { keepPlugins(y.Pipeline, 0, n/2); return true })
		c.try(func(y *XScenario) bool { keepPlugins(y.Pipeline, n/2, n); return true })
	}
	for i := range p.Exchanges {
		if len(p.Exchanges) > 1 {
			c.try(func(y *XScenario) bool { dropExchange(y.Pipeline, i); return true })
		}
	}
	for i := range p.Plugins {
		if len(p.Plugins) > 1 {
			c.try(func(y *XScenario) bool { keepPlugins(y.Pipeline, -1, i); return true })
		}
	}
	for i := range p.Entries {
		c.try(func(y *XScenario) bool {
			y.Pipeline.Entries = slices.Delete(y.Pipeline.Entries, i, i+1)
			return true
		})
	}
}

// pipelineSimplifications resets the plugins', entries' and chain's settings.
func (c *cuts) pipelineSimplifications(p *XPipeline) {
	for i, pl := range p.Plugins {
		for j := range pl.Acts {
			c.try(func(y *XScenario) bool {
				y.Pipeline.Plugins[i].Acts = slices.Delete(y.Pipeline.Plugins[i].Acts, j, j+1)
				return true
			})
		}
		for j := range pl.Behaviours {
			c.try(func(y *XScenario) bool {
				y.Pipeline.Plugins[i].Behaviours = slices.Delete(y.Pipeline.Plugins[i].Behaviours, j, j+1)
				return true
			})
		}
		c.try(func(y *XScenario) bool {
			q := &y.Pipeline.Plugins[i]
			ch := q.ReadsBody || q.WritesRequestBody || q.WritesResponseBody || q.Requires != nil || q.Schema
			q.ReadsBody, q.WritesRequestBody, q.WritesResponseBody, q.Requires, q.Schema = false, false, false, nil, false
			return ch
		})
	}
	for i, en := range p.Entries {
		c.try(func(y *XScenario) bool {
			y.Pipeline.Entries[i].OnError, y.Pipeline.Entries[i].Config = "", ""
			return en.OnError != "" || en.Config != ""
		})
	}
	c.try(func(y *XScenario) bool {
		q := y.Pipeline
		ch := q.Start || q.Stop || q.Ready != 0 || q.Mode != "" || q.FinishTimeoutMs != 0
		q.Start, q.Stop, q.Ready, q.Mode, q.FinishTimeoutMs = false, false, 0, "", 0
		return ch
	})
}

// exchangeSimplifications simplifies each exchange and its stream.
func (c *cuts) exchangeSimplifications(p *XPipeline) {
	for i, ex := range p.Exchanges {
		c.try(func(y *XScenario) bool {
			q := &y.Pipeline.Exchanges[i]
			ch := q.Cancelled || q.FinishTwice || q.EarlyEnd || q.Body != nil || q.Header != nil || q.Status != 0 || q.Method != "GET"
			q.Cancelled, q.FinishTwice, q.EarlyEnd, q.Body, q.Header, q.Status, q.Method = false, false, false, nil, nil, 0, "GET"
			return ch
		})
		if ex.Upstream == "sse" {
			c.try(func(y *XScenario) bool {
				q := &y.Pipeline.Exchanges[i]
				q.Upstream, q.Chunks, q.EarlyEnd, q.JSON = "json", nil, false, "{}"
				return true
			})
			// Fewer events: the stream without its first or its last
			// block.
			if body := strings.Join(ex.Chunks, ""); strings.Count(body, "\n\n") > 1 {
				k := strings.Index(body, "\n\n") + 2
				l := strings.LastIndex(strings.TrimSuffix(body, "\n\n"), "\n\n") + 2
				for _, cut := range []string{body[k:], body[:l]} {
					c.try(func(y *XScenario) bool {
						y.Pipeline.Exchanges[i].Chunks = []string{cut}
						return cut != body
					})
				}
			}
		}
		if len(ex.Chunks) > 1 {
			c.try(func(y *XScenario) bool {
				q := &y.Pipeline.Exchanges[i]
				q.Chunks = []string{strings.Join(q.Chunks, "")}
				return true
			})
			for j := range ex.Chunks {
				c.try(func(y *XScenario) bool {
					q := &y.Pipeline.Exchanges[i]
					q.Chunks = slices.Delete(q.Chunks, j, j+1)
					return true
				})
			}
		}
	}
}

// interceptCuts removes and resets extensions.
func (c *cuts) interceptCuts(d *XIntercept) {
	dropEach(c, len(d.Extensions), func(y *XScenario) *[]XExt { return &y.Intercept.Extensions })
	for i, ext := range d.Extensions {
		c.try(func(y *XScenario) bool {
			q := &y.Intercept.Extensions[i]
			ch := q.Required || q.Priority != 0 || q.Slots != nil || q.NotifyError || q.Decision != "continue"
			q.Required, q.Priority, q.Slots, q.Points, q.NotifyError, q.Decision, q.Replacement, q.TimeoutMs = false, 0, nil, nil, false, "continue", "", 0
			return ch && ext.ID != ""
		})
	}
}

// hookCuts removes and resets hooks.
func (c *cuts) hookCuts(h *XHooks) {
	dropEach(c, len(h.Hooks), func(y *XScenario) *[]XHook { return &y.Hooks.Hooks })
	for i, k := range h.Hooks {
		c.try(func(y *XScenario) bool {
			q := &y.Hooks.Hooks[i]
			q.Do, q.Value, q.Policy, q.Order = "pass", "", "", 0
			return k.Do != "pass" || k.Policy != "" || k.Order != 0
		})
	}
}

// dropEach tries the scenario without each of the n elements of the list
// that list picks, in order, as long as one would be left.
func dropEach[T any](c *cuts, n int, list func(*XScenario) *[]T) {
	if n < 2 {
		return
	}
	for i := range n {
		c.try(func(y *XScenario) bool {
			l := list(y)
			*l = slices.Delete(*l, i, i+1)
			return true
		})
	}
}

// keepPlugins keeps plugins [from, to) (from < 0: every plugin but to)
// and the entries naming them.
func keepPlugins(p *XPipeline, from, to int) {
	var keep []XPlugin
	for i, pl := range p.Plugins {
		if (from < 0 && i != to) || (from >= 0 && i >= from && i < to) {
			keep = append(keep, pl)
		}
	}
	p.Plugins = keep
	names := pluginNames(p)
	var es []XEntry
	for _, e := range p.Entries {
		if slices.Contains(names, e.Plugin) {
			es = append(es, e)
		}
	}
	p.Entries = es
}

// dropExchange removes exchange i and renumbers the acts that name later
// exchanges.
func dropExchange(p *XPipeline, i int) {
	p.Exchanges = slices.Delete(p.Exchanges, i, i+1)
	for k := range p.Plugins {
		var acts []XAct
		for _, a := range p.Plugins[k].Acts {
			switch {
			case a.Exchange == i:
				continue
			case a.Exchange > i:
				a.Exchange--
			}
			acts = append(acts, a)
		}
		p.Plugins[k].Acts = acts
	}
}

// Found is one difference an exploration found, shrunk.
type Found struct {
	Index    int         `json:"index"`
	Original *XScenario  `json:"-"`
	Scenario *XScenario  `json:"scenario"`
	Diff     *Difference `json:"difference"`
	// From and To are the scenario's sizes before and after shrinking;
	// Trials the runs shrinking took.
	From, To, Trials int
	// NeedsHistory is set when the shrunk scenario does not differ on a
	// fresh runtime process (Explorer.Fresh): the difference needs what
	// earlier scenarios left in the runtime.
	NeedsHistory bool
}

// Explore runs n generated scenarios of seed and returns every difference
// that counts, each shrunk, and the differences at declared choices (not
// shrunk), which count only with Strict.
func (e *Explorer) Explore(ctx context.Context, seed uint64, n int, progress func(i int, d *Difference)) (found []Found, choices []Found) {
	fams := hostedFamilies(e.Test.desc.Families, e.Ref.desc.Families)
	if len(fams) == 0 {
		return nil, nil
	}
	seen := map[string]bool{} // one report per rule: the same fault shows in many scenarios
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		x := Generate(seed, i, fams)
		d, _, _ := e.Check(ctx, x)
		if progress != nil {
			progress(i, d)
		}
		if d == nil {
			continue
		}
		if !e.Counts(d) {
			choices = append(choices, Found{Index: i, Original: x, Scenario: x, Diff: d, From: x.Size(), To: x.Size()})
			continue
		}
		key := d.Rule + fmt.Sprint(d.Monitor)
		if seen[key] {
			continue
		}
		seen[key] = true
		s, sd, trials := e.Shrink(ctx, x, d)
		found = append(found, Found{Index: i, Original: x, Scenario: s, Diff: sd, From: x.Size(), To: s.Size(), Trials: trials, NeedsHistory: !e.freshDiffers(ctx, s, sd)})
	}
	return found, choices
}

// freshDiffers reports whether x differs by d's rule on a fresh copy of
// the runtime under test (true when there is no Fresh to ask).
func (e *Explorer) freshDiffers(ctx context.Context, x *XScenario, d *Difference) bool {
	if e.Fresh == nil {
		return true
	}
	r, err := e.Fresh(ctx)
	if err != nil {
		return true
	}
	f := *e
	f.Test = r
	// Check replaces a copy that crashes with another: close the last.
	defer func() { f.Test.Close() }()
	nd, _, _ := f.Check(ctx, x)
	return nd != nil && nd.Rule == d.Rule
}

// hostedFamilies are the families both runtimes host, in P, D, H order.
func hostedFamilies(a, b []string) []string {
	var out []string
	for _, f := range []string{"P", "D", "H"} {
		if slices.Contains(a, f) && slices.Contains(b, f) {
			out = append(out, f)
		}
	}
	return out
}

// Launch starts a runtime for exploration (the Launcher's subject).
func (l Launcher) LaunchRuntime(ctx context.Context) (*Runtime, error) {
	s, err := l.Launch(ctx)
	if err != nil {
		return nil, err
	}
	return s.(*Runtime), nil
}
