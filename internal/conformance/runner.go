package conformance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/trace"
)

// Isolation says how many plugin processes a run uses.
type Isolation string

const (
	// IsolationCase starts a fresh subject for every case: a crash or hang
	// is attributed exactly. It is the default.
	IsolationCase Isolation = "case"
	// IsolationSuite shares one subject between all cases; it is relaunched
	// after a case that killed it.
	IsolationSuite Isolation = "suite"
)

// Status is how a case ended.
type Status string

const (
	StatusPass Status = "pass"
	StatusFail Status = "fail"
	StatusSkip Status = "skip"
	// StatusKnownFailing: the case failed and is listed in the
	// known-failing baseline; it does not fail the run.
	StatusKnownFailing Status = "known-failing"
	// StatusFixed: the case is listed as known-failing but passed; the
	// entry is stale and fails the run until it is removed.
	StatusFixed Status = "fixed"
	// StatusFlaky: the case is listed as known-flaky, failed, and passed on
	// a retry.
	StatusFlaky Status = "flaky"
	// StatusDiffers: a check of a choice failed on an implementation that
	// did not declare abkit's alternative: it takes another allowed
	// behaviour, or is wrong in a way only it can tell. It does not fail
	// the run unless --strict.
	StatusDiffers Status = "differs"
)

// Bad reports whether s fails the run.
func (s Status) Bad() bool { return s == StatusFail || s == StatusFixed }

// Options tune a run. The zero value runs every case with defaults.
type Options struct {
	// Parallel is how many cases run at once; 0 means GOMAXPROCS.
	Parallel int
	// Timeout bounds each case; 0 means DefaultTimeout.
	Timeout time.Duration
	// Isolation is case (default), suite or pool.
	Isolation Isolation
	// Run keeps only the cases whose ID matches one of the patterns (all
	// when empty); Skip drops the cases whose ID matches one.
	Run, Skip []*regexp.Regexp
	// KnownFailing and KnownFlaky are baselines (nil: none).
	KnownFailing, KnownFlaky *Baseline
	// PoisonFrames overwrites frame buffers after each call (P24). Only an
	// in-process subject can be caught keeping them: across the protocol
	// every frame is a fresh message.
	PoisonFrames bool
	// OnResult is called once per case as it ends, from any goroutine but
	// never concurrently.
	OnResult func(CaseResult)
	// Host configures the processes a self-test launches itself (the
	// plugin binaries and runtimes it judges); zero means the defaults.
	Host pluginhost.Options
	// Strict judges every choice as abkit's reference takes it, whatever
	// the implementation declares: a check of abkit's alternative counts
	// as a rule (conformance run --strict).
	Strict bool
	// DebugLog keeps the debug and trace lines go-plugin and hclog write
	// to a plugin's stderr (its handshake chatter) in results, reports and
	// load errors; without it they are dropped (conformance run -v keeps
	// them).
	DebugLog bool
}

// DefaultTimeout bounds a case when Options.Timeout is zero. The longest
// case waits a little over a 2 s finish deadline (P28).
const DefaultTimeout = 10 * time.Second

// caseGrace is how long a case past its timeout may take to wind down
// before its subject is killed.
const caseGrace = 250 * time.Millisecond

// FlakyAttempts is how many times a known-flaky case runs at most.
const FlakyAttempts = 3

// CaseResult is how one case went.
type CaseResult struct {
	ID      string   `json:"id"`
	Rules   []string `json:"rules"`
	Summary string   `json:"summary"`
	// Kind is rule or choice; a choice result names the choice point,
	// the alternative the case checks and the one declared, if any.
	Kind        Kind          `json:"kind"`
	Choice      string        `json:"choice,omitempty"`
	Alternative string        `json:"alternative,omitempty"`
	Declared    string        `json:"declared,omitempty"`
	Status      Status        `json:"status"`
	Reason      string        `json:"reason,omitempty"` // why it was skipped
	Failures    []Failure     `json:"failures,omitempty"`
	Duration    time.Duration `json:"duration_ns"`
	Attempts    int           `json:"attempts,omitempty"`
	Trace       []trace.Event `json:"trace,omitempty"`
	Log         []string      `json:"log,omitempty"`
	Stderr      string        `json:"stderr,omitempty"`
}

// Report is a whole run.
type Report struct {
	// Kind is what is under test: plugin, or runtime for the runtime suite.
	Kind        string        `json:"kind,omitempty"`
	Target      string        `json:"target"`
	Plugin      *Reported     `json:"plugin"`
	Isolation   Isolation     `json:"isolation"`
	Parallel    int           `json:"parallel"`
	Duration    time.Duration `json:"duration_ns"`
	Interrupted bool          `json:"interrupted,omitempty"`
	// Strict is set when choices were judged as rules (Options.Strict).
	Strict bool `json:"strict,omitempty"`
	// Notes say how the run differed from what was asked (for example the
	// isolation forced by --reattach).
	Notes   []string     `json:"notes,omitempty"`
	Results []CaseResult `json:"results"`
}

// Counts tallies results by status.
func (r *Report) Counts() map[Status]int {
	m := map[Status]int{}
	for _, c := range r.Results {
		m[c.Status]++
	}
	return m
}

// OK reports whether the run passes: no failure and no stale baseline
// entry, and not interrupted.
func (r *Report) OK() bool {
	if r.Interrupted {
		return false
	}
	for _, c := range r.Results {
		if c.Status.Bad() {
			return false
		}
	}
	return true
}

// LoadError reports that the plugin (or runtime) could not be started or
// described.
type LoadError struct {
	// Kind is plugin or runtime.
	Kind   string
	Target string
	Err    error
	Stderr string
}

func (e *LoadError) Error() string {
	kind := cmp.Or(e.Kind, "plugin")
	s := fmt.Sprintf("%s %s could not be loaded: %v", kind, e.Target, e.Err)
	if e.Stderr != "" {
		s += "\n" + kind + " stderr:\n" + e.Stderr
	}
	return redact.String(s)
}

// KindOf says what a launcher starts: "runtime" when it says so (a Kind
// method), else "plugin".
func KindOf(l Launcher) string {
	if k, ok := l.(interface{ Kind() string }); ok {
		return k.Kind()
	}
	return "plugin"
}

func (e *LoadError) Unwrap() error { return e.Err }

// Select returns the cases of reg that the Run and Skip patterns keep.
func Select(reg *Registry, run, skip []*regexp.Regexp) []*Case {
	var out []*Case
	for _, c := range reg.Cases() {
		if len(run) > 0 && !matchAny(run, c.ID) {
			continue
		}
		if matchAny(skip, c.ID) {
			continue
		}
		out = append(out, c)
	}
	return out
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// Run runs the selected cases of reg against subjects from l. It returns a
// *LoadError when the plugin cannot be started at all; otherwise a report,
// also when ctx is cancelled part-way (Interrupted, with the results so
// far). Every subject it launched is closed when it returns.
func Run(ctx context.Context, reg *Registry, l Launcher, opts Options) (*Report, error) {
	if opts.Parallel <= 0 {
		opts.Parallel = runtime.GOMAXPROCS(0)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Isolation == "" {
		opts.Isolation = IsolationCase
	}
	var notes []string
	single := ""
	if sp, ok := l.(SingleProcess); ok {
		single = sp.SingleProcess()
		if opts.Isolation != IsolationSuite {
			opts.Isolation = IsolationSuite
		}
		notes = append(notes, single)
	}
	if a, ok := l.(interface{ AbortCalls() }); ok {
		// A cancelled run (SIGINT, SIGTERM) ends the calls hanging in its
		// plugins now, not at the case timeout.
		defer context.AfterFunc(ctx, a.AbortCalls)()
	}
	start := time.Now()
	first, err := l.Launch(ctx)
	if err != nil {
		return nil, loadError(l, err, opts.DebugLog)
	}
	desc := first.Describe()
	notes = append(notes, CheckAlternatives(desc.Alternatives)...)
	if opts.Strict {
		notes = append(notes, "strict: every choice is judged as abkit's reference takes it")
	}
	rep := &Report{Kind: KindOf(l), Target: l.Target(), Plugin: desc, Isolation: opts.Isolation, Parallel: opts.Parallel, Strict: opts.Strict, Notes: notes}

	r := &runner{l: l, opts: opts, kind: KindOf(l)}
	cases := Select(reg, opts.Run, opts.Skip)
	switch opts.Isolation {
	case IsolationSuite:
		r.shared = first
	case IsolationPool:
		r.pool = newPool(l, first)
		defer r.pool.close()
	default:
		// The first case runs on the process that answered Describe: it
		// is as fresh as any (every start is described), so a run starts
		// one process per case, not one more.
		toRun := 0
		for _, c := range cases {
			if applies(c, desc) == "" && Judge(c, desc.Alternatives, opts.Strict).Skip == "" {
				toRun++
			}
		}
		r.spares = newSpares(ctx, l, first, opts.Parallel, toRun)
		defer r.spares.close()
	}
	defer r.closeShared()

	results := make([]CaseResult, len(cases))
	done := make([]bool, len(cases))
	var emit sync.Mutex
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for i, c := range cases {
		j := Judge(c, desc.Alternatives, opts.Strict)
		why := applies(c, desc)
		if why == "" && single != "" && c.FreshProcess {
			why = "the case needs a second plugin process, and with --reattach there is only the one you started"
		}
		if why == "" {
			why = j.Skip
		}
		if why != "" {
			results[i] = judged(CaseResult{ID: c.ID, Rules: c.Rules, Summary: c.Summary, Status: StatusSkip, Reason: why}, c, j, desc.Alternatives, opts.Strict)
			done[i] = true
			if opts.OnResult != nil {
				emit.Lock()
				opts.OnResult(results[i])
				emit.Unlock()
			}
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res := judged(r.runCase(ctx, c), c, j, desc.Alternatives, opts.Strict)
			if ctx.Err() != nil && res.Status.Bad() {
				return // interrupted, not a verdict
			}
			results[i] = res
			done[i] = true
			if opts.OnResult != nil {
				emit.Lock()
				opts.OnResult(res)
				emit.Unlock()
			}
		}()
	}
	wg.Wait()
	for i := range cases {
		if done[i] {
			rep.Results = append(rep.Results, results[i])
		}
	}
	rep.Interrupted = ctx.Err() != nil
	rep.Duration = time.Since(start)
	return rep, nil
}

// loadError is the error of a plugin that could not be started, with
// what it wrote to stderr (without its debug log unless debug is set).
func loadError(l Launcher, err error, debug bool) *LoadError {
	le := &LoadError{Kind: KindOf(l), Target: l.Target(), Err: err}
	var se interface{ StderrText() string }
	if errors.As(err, &se) {
		le.Stderr = se.StderrText()
		if !debug {
			le.Stderr = StripDebugLog(le.Stderr)
		}
	}
	return le
}

// judged stamps res with the case's kind and turns a failure that does not
// count into a difference: that of an uncounted choice case, or one whose
// every finding is of an uncounted choice check within a rule case.
func judged(res CaseResult, c *Case, j Judgement, decl map[string]string, strict bool) CaseResult {
	res.Kind, res.Choice, res.Declared = j.Kind, c.Choice, j.Declared
	if c.Choice != "" {
		cp, _ := ChoicePointByID(c.Choice)
		res.Alternative = c.checks(cp)
	}
	if res.Status != StatusFail {
		return res
	}
	counted := j.Counted && slices.ContainsFunc(res.Failures, func(f Failure) bool {
		return f.Choice == "" || countsChoice(f.Choice, decl, strict)
	})
	if !counted {
		res.Status = StatusDiffers
	}
	return res
}

// countsChoice reports whether a failed check that follows choice point id
// is a fault: the implementation declared an alternative there (so the
// check followed it) or the run is strict.
func countsChoice(id string, decl map[string]string, strict bool) bool {
	if strict {
		return true
	}
	cp, ok := ChoicePointByID(id)
	return ok && cp.Has(decl[id])
}

func applies(c *Case, d *Reported) string {
	if c.Applies == nil {
		return ""
	}
	return c.Applies(d)
}

type runner struct {
	l    Launcher
	opts Options
	kind string // plugin or runtime, in findings
	// spares are the fresh subjects of case isolation, started ahead.
	spares *spares
	// pool holds the subjects of pool isolation between cases.
	pool *pool

	mu     sync.Mutex
	shared Subject
}

func (r *runner) closeShared() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shared != nil {
		r.shared.Close()
		r.shared = nil
	}
}

// subject returns the subject a case runs against, whether the case owns
// it (and must close it) and, in pool isolation, whether an earlier case
// ran on it. fresh asks pool isolation for a new process.
func (r *runner) subject(ctx context.Context, fresh bool) (s Subject, owned, reused bool, err error) {
	if r.pool != nil {
		if fresh {
			s, err = r.l.Launch(ctx)
			return s, true, false, err
		}
		s, reused, err = r.pool.take(ctx)
		return s, true, reused, err
	}
	if r.opts.Isolation != IsolationSuite {
		s, err := r.spares.take(ctx)
		return s, true, false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shared != nil && r.shared.Exited() == nil {
		return r.shared, false, false, nil
	}
	if r.shared != nil {
		r.shared.Close()
		r.shared = nil
	}
	s, err = r.l.Launch(ctx)
	if err != nil {
		return nil, false, false, err
	}
	r.shared = s
	return s, false, false, nil
}

func (r *runner) runCase(ctx context.Context, c *Case) CaseResult {
	attempts := 1
	flaky := r.opts.KnownFlaky.Match(c.ID)
	if flaky {
		attempts = FlakyAttempts
	}
	var res CaseResult
	for a := 1; a <= attempts; a++ {
		res = r.attemptFresh(ctx, c)
		res.Attempts = a
		if !res.Status.Bad() || ctx.Err() != nil {
			break
		}
	}
	switch {
	case flaky && res.Status == StatusPass && res.Attempts > 1:
		res.Status = StatusFlaky
	case r.opts.KnownFailing.Match(c.ID) && res.Status == StatusFail:
		res.Status = StatusKnownFailing
	case r.opts.KnownFailing.Match(c.ID) && res.Status == StatusPass:
		res.Status = StatusFixed
		res.Failures = append(res.Failures, Failure{Rule: c.Rules[0],
			Message: "fixed: the case is listed as known-failing but passed; remove it from the baseline"})
	}
	return res
}

// attemptFresh runs c once. In pool isolation a case that failed on a
// process an earlier case had passed on is run again on a fresh process,
// and that run is the verdict: what the earlier cases left in the process
// must not decide a failure (IsolationPool).
func (r *runner) attemptFresh(ctx context.Context, c *Case) CaseResult {
	res, reused := r.attempt(ctx, c, false)
	if !reused || !res.Status.Bad() || ctx.Err() != nil {
		return res
	}
	first := "it failed"
	if len(res.Failures) > 0 {
		first = res.Failures[0].String()
	}
	again, _ := r.attempt(ctx, c, true)
	again.Log = append([]string{fmt.Sprintf("pool isolation: the case failed on a process earlier cases had passed on (%s); this is its run on a fresh process", first)}, again.Log...)
	again.Duration += res.Duration
	return again
}

// attempt runs c once, bounded by the case timeout, on a fresh process
// when fresh is set; reused says whether an earlier case ran on its
// subject (pool isolation). A case that overruns the timeout fails, and
// its subject is closed (killing a plugin process) so that the case's
// goroutine is released.
func (r *runner) attempt(ctx context.Context, c *Case, fresh bool) (CaseResult, bool) {
	res := CaseResult{ID: c.ID, Rules: c.Rules, Summary: c.Summary}
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	subj, owned, reused, err := r.subject(cctx, fresh)
	if err != nil {
		res.Status = StatusFail
		res.Failures = []Failure{{Rule: c.Rules[0], Message: fmt.Sprintf("the %s could not be started for this case: %v", r.kind, err)}}
		res.Duration = time.Since(start)
		return res, reused
	}
	t := &T{ctx: cctx, subject: subj, launcher: r.l, rec: trace.NewRecorder(), poison: r.opts.PoisonFrames, strict: r.opts.Strict, start: start}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		// The monitor's end checks run after the case, however it ended.
		defer t.monitorEnd()
		defer func() {
			if p := recover(); p != nil {
				// A hook called outside a runtime (the host's adapter
				// panics with its call error: a hook has no error result)
				// failed in the plugin, not in the suite.
				var ce *pluginhost.CallError
				if e, ok := p.(error); ok && errors.As(e, &ce) {
					t.ErrorAt(c.Rules[0], ce.Call, "%s", callProblem(e.Error()))
					return
				}
				t.Errorf(c.Rules[0], "the case panicked (a bug in the suite, or a value it did not expect from the %s): %v", r.kind, p)
			}
		}()
		c.Run(t)
	}()
	timedOut, overran := false, false
	select {
	case <-finished:
	case <-cctx.Done():
		overran = ctx.Err() == nil
		// The calls the case is making share its deadline: give it a
		// moment to record what they found (a deadline overrun at an
		// exchange says more than "the case timed out") and end.
		select {
		case <-finished:
		case <-time.After(caseGrace):
			timedOut = true
		}
	}
	exited := subj.Exited()
	if timedOut {
		// What the case finds after the kill (calls failing because the
		// process is gone) follows from the overrun; it goes to the log,
		// not the findings.
		t.mu.Lock()
		before := len(t.failures)
		t.mu.Unlock()
		// Kill first, so the case's goroutine gets errors back and ends;
		// an in-process subject cannot be stopped and is abandoned.
		subj.Close()
		t.closeExtra()
		select {
		case <-finished:
		case <-time.After(time.Second):
		}
		t.mu.Lock()
		for _, f := range t.failures[before:] {
			t.logs = append(t.logs, "after the kill: "+f.String())
		}
		t.failures = t.failures[:before]
		t.mu.Unlock()
		if ctx.Err() == nil {
			t.Errorf(c.Rules[0], "deadline overrun: the case did not finish within its %v timeout (--timeout); the %s hangs, and it was killed", r.opts.Timeout, r.kind)
		} else {
			t.Errorf(c.Rules[0], "interrupted")
		}
	} else if exited != nil {
		t.Errorf(c.Rules[0], "during the case, %v", exited)
	} else if overran && !t.Failed() {
		// It ended within the grace, but its checks were cut short.
		t.Errorf(c.Rules[0], "deadline overrun: the case did not finish within its %v timeout (--timeout); the %s was too slow for it", r.opts.Timeout, r.kind)
	}
	res.Stderr = subj.Stderr()
	if !r.opts.DebugLog {
		res.Stderr = StripDebugLog(res.Stderr)
	}
	switch {
	case owned && r.pool != nil && !timedOut && exited == nil && !t.Failed():
		r.pool.put(subj)
	case owned || timedOut || exited != nil:
		subj.Close()
	}
	t.closeExtra()
	t.mu.Lock()
	defer t.mu.Unlock()
	res.Failures = append([]Failure(nil), t.failures...)
	res.Log = append([]string(nil), t.logs...)
	res.Trace = t.rec.Events()
	res.Duration = time.Since(start)
	res.Status = StatusPass
	if len(res.Failures) > 0 {
		res.Status = StatusFail
	}
	redactResult(&res)
	return res, reused
}

// redactResult passes every text of a case result through the redaction
// engine before any report, JUnit file or artifact sees it: a plugin's
// stderr and messages quote whatever the plugin printed (D16).
func redactResult(res *CaseResult) {
	res.Reason = redact.String(res.Reason)
	res.Stderr = redact.String(res.Stderr)
	for i := range res.Failures {
		f := &res.Failures[i]
		f.Message, f.Diff = redact.String(f.Message), redact.String(f.Diff)
	}
	for i := range res.Log {
		res.Log[i] = redact.String(res.Log[i])
	}
	for i := range res.Trace {
		e := &res.Trace[i]
		e.Reason, e.Error = redact.String(e.Reason), redact.String(e.Error)
		for j := range e.Extensions {
			x := &e.Extensions[j] // the runtime redacted the values; the host's texts too
			x.Refused = redact.String(x.Refused)
		}
	}
}

// StripDebugLog drops from a plugin's stderr the lines go-plugin and hclog
// write at debug or trace level (JSON lines whose "@level" is debug or
// trace: the handshake's "configuring server automatic mTLS", "plugin
// address"): they say nothing about a failure and bury what the plugin
// printed. Every other line is kept as written.
func StripDebugLog(s string) string {
	if !strings.Contains(s, `"@level"`) {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if isDebugLogLine(l) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

func isDebugLogLine(l string) bool {
	l = strings.TrimSpace(l)
	if !strings.HasPrefix(l, "{") || !strings.Contains(l, `"@level"`) {
		return false
	}
	var v struct {
		Level string `json:"@level"`
	}
	if json.Unmarshal([]byte(l), &v) != nil {
		return false
	}
	return v.Level == "debug" || v.Level == "trace"
}

// closeExtra closes what the case launched. After it, Launch closes what
// it starts: a case abandoned at its timeout may still be starting one.
func (t *T) closeExtra() {
	t.mu.Lock()
	extra := t.extra
	t.extra, t.ended = nil, true
	t.mu.Unlock()
	for _, s := range extra {
		s.Close()
	}
}

// spares hands out the fresh subjects of case isolation, each used by one
// case only, and starts the next ones while cases run: a plugin's start
// (100–300 ms for an interpreter, docs/perf.md) then overlaps the other
// cases' calls, which mostly wait, instead of coming before its own case.
// At most parallel starts are ready or under way ahead of the cases, and
// none is started for a case that is not coming; a case that finds none
// ready (a retry of a flaky case) starts its own.
type spares struct {
	ctx      context.Context
	l        Launcher
	parallel int

	mu      sync.Mutex
	ready   []launched
	pending int // starts under way
	left    int // cases still to take a subject, less those ready or under way
	closed  bool
	wg      sync.WaitGroup
	arrived *sync.Cond // on mu: a start under way finished
}

type launched struct {
	s   Subject
	err error
}

func newSpares(ctx context.Context, l Launcher, first Subject, parallel, cases int) *spares {
	p := &spares{ctx: ctx, l: l, parallel: max(1, parallel), ready: []launched{{s: first}}, left: cases - 1}
	p.arrived = sync.NewCond(&p.mu)
	p.mu.Lock()
	p.refillLocked()
	p.mu.Unlock()
	return p
}

// take returns a fresh subject: one started ahead (waiting for one under
// way), or a new one; then it starts the next ahead.
func (p *spares) take(ctx context.Context) (Subject, error) {
	p.mu.Lock()
	for len(p.ready) == 0 && p.pending > 0 {
		p.arrived.Wait() // a start under way is bounded by the start timeout
	}
	if len(p.ready) > 0 {
		x := p.ready[0]
		p.ready = p.ready[1:]
		p.refillLocked()
		p.mu.Unlock()
		return x.s, x.err
	}
	if p.left > 0 {
		p.left--
	}
	p.refillLocked()
	p.mu.Unlock()
	return p.l.Launch(ctx)
}

// refillLocked starts subjects ahead while fewer than parallel are ready
// or under way and cases are left to use them.
func (p *spares) refillLocked() {
	for !p.closed && p.left > 0 && len(p.ready)+p.pending < p.parallel {
		p.left--
		p.pending++
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			s, err := p.l.Launch(p.ctx)
			p.mu.Lock()
			defer p.mu.Unlock()
			p.pending--
			defer p.arrived.Broadcast()
			if p.closed {
				if s != nil {
					s.Close()
				}
				return
			}
			p.ready = append(p.ready, launched{s: s, err: err})
		}()
	}
}

// close waits for the starts under way and stops every subject no case
// took.
func (p *spares) close() {
	p.mu.Lock()
	p.closed = true
	left := p.ready
	p.ready = nil
	p.mu.Unlock()
	p.wg.Wait()
	for _, x := range left {
		if x.s != nil {
			x.s.Close()
		}
	}
}
