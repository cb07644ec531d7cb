// Package conformance checks, rule by rule, whether a plugin honours the
// abkit contracts (docs/contracts.md). The runner plays the host with
// the reference runtimes (internal/pipeline, internal/dispatch,
// internal/hookbus) and drives the plugin under test, in-process or as a
// plugin process, through a registry of cases. Each case names the rule IDs
// it checks; a case that does not apply to the plugin's descriptor is
// skipped with the reason.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/family"
	"github.com/google/go-cmp/cmp"
)

// Case is one conformance check.
type Case struct {
	// ID names the case: rule/topic/variant, for example
	// "P21/last-exactly-once/zero-frames".
	ID string `json:"id"`
	// Rules are the contract rule IDs the case checks.
	Rules []string `json:"rules"`
	// Summary is one line.
	Summary string `json:"summary"`
	// Explain says what the case does, what a failure usually means and how
	// to fix it.
	Explain string `json:"explain"`
	// Applies returns "" when the case applies to d, or the reason it is
	// skipped.
	Applies func(d *Reported) string `json:"-"`
	// Run performs the check.
	Run func(t *T) `json:"-"`
	// FreshProcess marks a case that starts a second copy of the plugin
	// (T.Launch); it is skipped when the launcher has only one process
	// (SingleProcess, --reattach).
	FreshProcess bool `json:"fresh_process,omitempty"`
	// Choice, set on a check of a choice point (ChoicePoints), makes the
	// case a choice: it checks one allowed behaviour, Alternative (empty:
	// the reference's), and Judge decides whether its failure counts.
	Choice      string `json:"choice,omitempty"`
	Alternative string `json:"alternative,omitempty"`
}

// Failure is one thing a case found wrong.
type Failure struct {
	// Rule is the rule the plugin broke.
	Rule string `json:"rule"`
	// At says where, when the case drives several exchanges or calls: the
	// exchange and the call, for example "exchange 3 of 6 (chat,
	// streamed, 5 frames), on_request".
	At string `json:"at,omitempty"`
	// Message says what was expected and what was observed.
	Message string `json:"message"`
	// Diff is a go-cmp diff (-want +got), when the failure compares values.
	Diff string `json:"diff,omitempty"`
	// Choice is set when the failed check is of a choice point's
	// alternative within a rule case (T.ChoiceErrorf): it counts only
	// when the implementation declared that alternative or the run is
	// strict.
	Choice string `json:"choice,omitempty"`
}

func (f Failure) String() string {
	s := f.Rule + ": "
	if f.Choice != "" {
		s = f.Rule + " [choice " + f.Choice + "]: "
	}
	if f.At != "" {
		s += f.At + ": "
	}
	s += f.Message
	if f.Diff != "" {
		s += "\n" + f.Diff
	}
	return s
}

// T is a running case: it hands the case its subject and collects failures
// and the trace.
type T struct {
	ctx      context.Context
	subject  Subject
	launcher Launcher
	rec      *trace.Recorder
	poison   bool
	strict   bool

	mu       sync.Mutex
	failures []Failure
	logs     []string
	extra    []Subject // launched by the case; closed when it ends
	ended    bool      // the case's subjects are closed: Launch keeps none
	mon      *monitor  // made by Factory; checked when the case ends
	start    time.Time
}

// Context is cancelled when the case times out or the run is stopped.
func (t *T) Context() context.Context { return t.ctx }

// Subject is the plugin under test.
func (t *T) Subject() Subject { return t.subject }

// Describe is the subject's descriptor.
func (t *T) Describe() *Reported { return t.subject.Describe() }

// Recorder collects the case's trace.
func (t *T) Recorder() *trace.Recorder { return t.rec }

// PoisonFrames reports whether the host overwrites frame buffers after each
// call (P24); the in-process suite sets it.
func (t *T) PoisonFrames() bool { return t.poison }

// Launch starts another fresh subject (a second process for P2). It is
// closed when the case ends.
func (t *T) Launch() (Subject, error) {
	s, err := t.launcher.Launch(t.ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		s.Close()
		return nil, errors.New("the case ended (its timeout) while a process was starting for it")
	}
	t.extra = append(t.extra, s)
	return s, nil
}

// Alternative is the alternative of choice point id that the case's
// expectations follow: the one the implementation declares, or abkit's
// when it declares none or the run is strict.
func (t *T) Alternative(id string) string {
	cp, ok := ChoicePointByID(id)
	if !ok {
		panic("conformance: unknown choice point " + id)
	}
	if d, ok := t.Describe().Alternatives[id]; ok && !t.strict && cp.Has(d) {
		return d
	}
	return cp.Reference
}

// ChoiceErrorf records a failure of rule found by a check that follows
// choice point id (see Alternative): a fault when the implementation
// declared the alternative checked or the run is strict, else a
// difference from abkit's choice.
func (t *T) ChoiceErrorf(id, rule, format string, args ...any) {
	t.record(Failure{Rule: rule, Choice: id, Message: fmt.Sprintf(format, args...)})
}

// ChoiceErrorAt is ChoiceErrorf at a place (see Failure.At).
func (t *T) ChoiceErrorAt(id, rule, at, format string, args ...any) {
	t.record(Failure{Rule: rule, At: at, Choice: id, Message: fmt.Sprintf(format, args...)})
}

// ChoiceDiff is Diff for a comparison that follows choice point id.
func (t *T) ChoiceDiff(id, rule, what string, want, got any, opts ...cmp.Option) bool {
	return t.diff(Failure{Rule: rule, Choice: id}, what, want, got, opts)
}

// Errorf records a failure of rule and lets the case go on.
func (t *T) Errorf(rule, format string, args ...any) {
	t.record(Failure{Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// ErrorAt records a failure of rule at a place (the exchange and the
// call, see Failure.At); failures with the same rule and message are
// reported once with the places they happened.
func (t *T) ErrorAt(rule, at, format string, args ...any) {
	t.record(Failure{Rule: rule, At: at, Message: fmt.Sprintf(format, args...)})
}

// Fatalf records a failure of rule and ends the case.
func (t *T) Fatalf(rule, format string, args ...any) {
	t.Errorf(rule, format, args...)
	runtime.Goexit()
}

// FatalAt records a failure of rule at a place and ends the case.
func (t *T) FatalAt(rule, at, format string, args ...any) {
	t.ErrorAt(rule, at, format, args...)
	runtime.Goexit()
}

// Diff records a failure of rule when want and got differ, with a go-cmp
// diff, and reports whether they were equal.
func (t *T) Diff(rule, what string, want, got any, opts ...cmp.Option) bool {
	return t.DiffAt(rule, "", what, want, got, opts...)
}

// DiffAt is Diff for a failure at a place (see Failure.At).
func (t *T) DiffAt(rule, at, what string, want, got any, opts ...cmp.Option) bool {
	return t.diff(Failure{Rule: rule, At: at}, what, want, got, opts)
}

// record adds f to the case's failures; cases call it from several
// goroutines.
func (t *T) record(f Failure) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures = append(t.failures, f)
}

// diff records f, with the go-cmp diff of want and got, when they differ,
// and reports whether they were equal.
func (t *T) diff(f Failure, what string, want, got any, opts []cmp.Option) bool {
	d := cmp.Diff(want, got, opts...)
	if d == "" {
		return true
	}
	f.Message, f.Diff = what+" (-want +got)", strings.TrimRight(d, "\n")
	t.record(f)
	return false
}

// Logf adds a line to the case's log, shown with --trace and in artifacts.
func (t *T) Logf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.logs = append(t.logs, fmt.Sprintf("%8.3fms ", float64(time.Since(t.start).Microseconds())/1000)+fmt.Sprintf(format, args...))
}

// Failed reports whether the case has failed so far.
func (t *T) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.failures) > 0
}

// Registry is an ordered set of cases.
type Registry struct {
	cases []*Case
	byID  map[string]*Case
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byID: map[string]*Case{}} }

// Add registers cases; a duplicate or malformed case panics, since the
// registry is built by code, not input.
func (r *Registry) Add(cs ...*Case) {
	for _, c := range cs {
		switch {
		case c.ID == "" || c.Run == nil || len(c.Rules) == 0 || c.Summary == "" || c.Explain == "":
			panic(fmt.Sprintf("conformance: case %q is incomplete: it needs an ID, rules, a summary, an explanation and Run", c.ID))
		case r.byID[c.ID] != nil:
			panic(fmt.Sprintf("conformance: case %q registered twice", c.ID))
		case c.Choice == "" && c.Alternative != "":
			panic(fmt.Sprintf("conformance: case %q names an alternative but no choice", c.ID))
		case c.Choice != "":
			cp, ok := ChoicePointByID(c.Choice)
			if !ok || (c.Alternative != "" && !cp.Has(c.Alternative)) {
				panic(fmt.Sprintf("conformance: case %q checks an unknown choice %q or alternative %q", c.ID, c.Choice, c.Alternative))
			}
		}
		r.byID[c.ID] = c
		r.cases = append(r.cases, c)
	}
}

// Cases returns the cases in registration order.
func (r *Registry) Cases() []*Case { return append([]*Case(nil), r.cases...) }

// Case returns the case with the given ID.
func (r *Registry) Case(id string) (*Case, bool) {
	c, ok := r.byID[id]
	return c, ok
}

// PluginSuite returns the suite in which the binary under test is a plugin
// of any family. Each cases_<family>_<group>.go file registers one rule
// group's cases (p: pipeline, d: dispatch, h: hooks): a table of cases,
// each naming the function that runs it. The order here is the order of
// the report.
func PluginSuite() *Registry {
	r := NewRegistry()
	addPipelineDescriptorCases(r)
	addPipelineLifecycleCases(r)
	addPipelineExchangeCases(r)
	addPipelineStreamCases(r)
	addPipelineFinishCases(r)
	addPipelineStateCases(r)
	addPipelineAxisCases(r)
	addPipelineDeadlineCases(r)
	addPipelineHeaderCases(r)
	addOutputCases(r)
	addDispatchCases(r)
	addHooksCases(r)
	return r
}

// Applicability helpers.

func needFamily(f string) func(*Reported) string {
	return func(d *Reported) string {
		if !d.Has(f) {
			return "the plugin does not serve family " + f
		}
		return ""
	}
}

func needBehaviour(b string) func(*Reported) string {
	return func(d *Reported) string {
		if r := needPipeline(d); r != "" {
			return r
		}
		if !d.HasBehaviour(b) {
			return "the plugin does not implement the optional behaviour " + b
		}
		return ""
	}
}

func needPipeline(d *Reported) string {
	if !d.Has(family.Pipeline) {
		return "the plugin does not serve family P"
	}
	if d.Pipeline == nil || d.Pipeline.ProbeError != "" {
		return "no instance of the plugin could be made (see P2/instances)"
	}
	return ""
}

// pipelineReady applies a case that needs a chain of the plugin: the
// reference runtime refuses to build one for a plugin whose descriptor
// breaks P2, so those plugins fail the descriptor cases and skip these. A
// description that breaks P5 fails the P5 cases only: the runtime builds
// the chain with a warning (docs/contracts.md, the build refusal review).
func pipelineReady(d *Reported) string {
	if r := needPipeline(d); r != "" {
		return r
	}
	for _, o := range d.Pipeline.Observed {
		if !o.Capabilities.Equal(d.Pipeline.Capabilities) || o.Name != d.Name {
			return "the plugin's instances disagree about themselves (P2), so no chain can be built (see P2/capabilities/instances-agree)"
		}
	}
	return ""
}

func all(fs ...func(*Reported) string) func(*Reported) string {
	return func(d *Reported) string {
		for _, f := range fs {
			if r := f(d); r != "" {
				return r
			}
		}
		return ""
	}
}

func behaviour(b string) func(*Reported) string {
	return func(d *Reported) string {
		if !d.HasBehaviour(b) {
			return "the plugin does not implement the optional behaviour " + b
		}
		return ""
	}
}
