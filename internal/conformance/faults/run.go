package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/judge"
)

// Roles of the corpus.
const (
	RolePlugin  = judge.SuitePlugin
	RoleRuntime = judge.SuiteRuntime
)

// Packages are the corpus binaries' main packages, built as
// "faulty-plugin" and "faulty-runtime" (Binaries).
var Packages = []string{"./internal/conformance/testdata/faults/faulty-plugin", "./internal/conformance/testdata/faults/faulty-runtime"}

// Binaries names the corpus binary of each role.
var Binaries = map[string]string{RolePlugin: "faulty-plugin", RoleRuntime: "faulty-runtime"}

// Verdict is what the suite made of one fault.
type Verdict struct {
	Fault
	Role string `json:"role"`
	// Killed: a case failed that cites the fault's rule, or one of whose
	// findings (a monitor's) cites it.
	Killed bool `json:"killed"`
	// KilledBy are those cases; Other the cases that failed without
	// citing the rule (a fault meant to break one rule that fails others
	// too is worth a look).
	KilledBy []string      `json:"killed_by,omitempty"`
	Other    []string      `json:"other,omitempty"`
	Err      string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Expected reports whether the verdict is what the corpus expects: killed,
// or not killed when the fault is a listed miss.
func (v Verdict) Expected() bool { return v.Killed == (v.Miss == "") }

// Summary is one role's kill rate.
type Summary struct {
	Role   string  `json:"role"`
	Faults int     `json:"faults"`
	Killed int     `json:"killed"`
	Rate   float64 `json:"kill_rate"` // killed / faults, in percent
}

// Summarize counts the verdicts per role.
func Summarize(vs []Verdict) []Summary {
	var out []Summary
	for _, g := range judge.ByGroup([]string{RolePlugin, RoleRuntime}, vs, func(v Verdict) string { return v.Role }) {
		s := Summary{Role: g.Name, Faults: len(g.Items)}
		for _, v := range g.Items {
			if v.Killed {
				s.Killed++
			}
		}
		s.Rate = 100 * float64(s.Killed) / float64(s.Faults)
		out = append(out, s)
	}
	return out
}

// Options tune a corpus run.
type Options struct {
	// Dir holds the corpus binaries (Packages, Binaries).
	Dir string
	// Parallel is how many faults are judged at once; 0 means GOMAXPROCS.
	Parallel int
	// Roles to run; empty means both.
	Roles []string
	// Only, when set, keeps the faults it returns true for.
	Only func(Fault) bool
}

// Run judges every fault of the corpus: each faulty plugin under the
// plugin suite (in-process for a fault only observable there), each
// faulty runtime under the runtime suite, in parallel. No behaviour
// examples take part: the contract cases alone must kill each fault.
func Run(ctx context.Context, o Options) ([]Verdict, error) {
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	links, err := os.MkdirTemp("", "abkit-faults-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(links)
	type job struct {
		f    Fault
		role string
		run  func(ctx context.Context) (*conformance.Report, error)
	}
	var jobs []job
	link := func(role, name string) (string, error) {
		p := filepath.Join(links, role+"-"+name)
		return p, os.Link(filepath.Join(o.Dir, Binaries[role]), p)
	}
	want := func(role string, f Fault) bool {
		return (len(o.Roles) == 0 || slices.Contains(o.Roles, role)) && (o.Only == nil || o.Only(f))
	}
	for _, pf := range Plugins() {
		if !want(RolePlugin, pf.Fault) {
			continue
		}
		pf := pf
		if pf.InProcess {
			jobs = append(jobs, job{pf.Fault, RolePlugin, func(ctx context.Context) (*conformance.Report, error) {
				return conformance.Run(ctx, conformance.PluginSuite(), conformance.InProcess(pf.Plugin()), conformance.Options{PoisonFrames: true, Parallel: 2})
			}})
			continue
		}
		jobs = append(jobs, job{pf.Fault, RolePlugin, func(ctx context.Context) (*conformance.Report, error) {
			// The binary picks its fault by its first argument.
			t := judge.Target{Suite: judge.SuitePlugin, Path: filepath.Join(o.Dir, Binaries[RolePlugin]), Args: []string{pf.Name}}
			return t.Run(ctx, conformance.Options{Isolation: conformance.IsolationSuite, Parallel: 4})
		}})
	}
	for _, rf := range Runtimes() {
		if !want(RoleRuntime, rf.Fault) {
			continue
		}
		path, err := link(RoleRuntime, rf.Name)
		if err != nil {
			return nil, fmt.Errorf("linking the faulty runtime %s: %w (build %s into %s)", rf.Name, err, Packages[1], o.Dir)
		}
		jobs = append(jobs, job{rf.Fault, RoleRuntime, func(ctx context.Context) (*conformance.Report, error) {
			// Only the cases citing the fault's rule: a runtime case
			// checks what it cites (the plugin suite runs whole, since its
			// monitors cite their rule in any case).
			reg, l, err := judge.Target{Suite: judge.SuiteRuntime, Path: path}.Launch()
			if err != nil {
				return nil, err
			}
			return conformance.Run(ctx, reg, l, conformance.Options{Parallel: 4, Isolation: conformance.IsolationPool, Run: judge.Citing(reg, rf.Rule)})
		}})
	}
	out := make([]Verdict, len(jobs))
	judge.Each(len(jobs), o.Parallel, func(i int) {
		j := jobs[i]
		start := time.Now()
		rep, err := j.run(ctx)
		v := Verdict{Fault: j.f, Role: j.role, Duration: time.Since(start)}
		if err != nil {
			v.Err = err.Error()
		} else {
			fill(&v, rep)
		}
		out[i] = v
	})
	return out, ctx.Err()
}

// RunControls runs the controls (ControlName) through the whole plugin
// and runtime suites and returns the cases that failed: none, or the
// corpus harness itself is at fault.
func RunControls(ctx context.Context, dir string) ([]string, error) {
	var bad []string
	reps := map[string]func() (*conformance.Report, error){
		RolePlugin: func() (*conformance.Report, error) {
			t := judge.Target{Suite: judge.SuitePlugin, Path: filepath.Join(dir, Binaries[RolePlugin]), Args: []string{ControlName}}
			return t.Run(ctx, conformance.Options{Isolation: conformance.IsolationSuite})
		},
		RoleRuntime: func() (*conformance.Report, error) {
			links, err := os.MkdirTemp("", "abkit-faults-control-")
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(links)
			p := filepath.Join(links, ControlName)
			if err := os.Link(filepath.Join(dir, Binaries[RoleRuntime]), p); err != nil {
				return nil, err
			}
			return judge.Target{Suite: judge.SuiteRuntime, Path: p}.Run(ctx, conformance.Options{Isolation: conformance.IsolationPool})
		},
	}
	for _, role := range []string{RolePlugin, RoleRuntime} {
		rep, err := reps[role]()
		if err != nil {
			return nil, fmt.Errorf("%s control: %w", role, err)
		}
		for _, r := range rep.Results {
			if r.Status.Bad() {
				bad = append(bad, fmt.Sprintf("%s control: %s: %v", role, r.ID, r.Failures))
			}
		}
	}
	return bad, nil
}

// fill fills the verdict from the report: killed by the failed cases that
// cite the fault's rule.
func fill(v *Verdict, rep *conformance.Report) {
	for _, r := range rep.Results {
		if r.Status != conformance.StatusFail {
			continue
		}
		cites := slices.Contains(r.Rules, v.Rule)
		for _, f := range r.Failures {
			cites = cites || f.Rule == v.Rule
		}
		if cites {
			v.KilledBy = append(v.KilledBy, r.ID)
		} else {
			v.Other = append(v.Other, r.ID)
		}
	}
	v.Killed = len(v.KilledBy) > 0
}

// Table is the corpus as data: one line per fault, role, name, the rule it
// breaks, and its story, tab-separated (internal/conformance/faults/corpus.tsv).
func Table() string {
	var b strings.Builder
	b.WriteString("# role\tfault\trule\tstory\n")
	for _, f := range Plugins() {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", RolePlugin, f.Name, f.Rule, f.Story)
	}
	for _, f := range Runtimes() {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", RoleRuntime, f.Name, f.Rule, f.Story)
	}
	return b.String()
}
