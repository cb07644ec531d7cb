package mutation

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/judge"
)

// Verdict is how a mutant ended.
type Verdict string

const (
	Killed     Verdict = "killed"
	Survived   Verdict = "survived"
	NotBuilt   Verdict = "not-built"  // the mutant does not compile: not counted
	Equivalent Verdict = "equivalent" // listed in the reviewed file: not run, not counted
)

// Result is one mutant's verdict.
type Result struct {
	Mutant
	Verdict Verdict `json:"verdict"`
	// KilledBy is the case that caught the mutant (confirmed by running
	// it again alone), or "start" when the binary could not start.
	KilledBy string `json:"killed_by,omitempty"`
	// Reason: why an equivalent mutant is equivalent; the compiler's first
	// line for a mutant that did not build.
	Reason string `json:"reason,omitempty"`
}

// Summary is one suite's figures.
type Summary struct {
	Suite      string  `json:"suite"`
	Mutants    int     `json:"mutants"`
	NotBuilt   int     `json:"not_built"`
	Equivalent int     `json:"equivalent"`
	Killed     int     `json:"killed"`
	Survived   int     `json:"survived"`
	Rate       float64 `json:"kill_rate"` // killed / (killed + survived), in percent
}

// Options tune a run.
type Options struct {
	// Root is the module root.
	Root string
	// Jobs is how many mutants are built at once (default GOMAXPROCS);
	// twice as many run their suite at once, since a suite run mostly waits.
	Jobs int
	// Run keeps only mutants whose key or file:line matches.
	Run *regexp.Regexp
	// Sample, when positive, keeps that many mutants per suite, chosen by
	// a hash of their keys (the same mutants every time).
	Sample int
	// Equivalent is the reviewed list; nil means none.
	Equivalent *EquivalentList
	// Progress, when set, gets one line per judged mutant.
	Progress func(Result)
	// NoReference skips building and judging the unmutated binaries first
	// (the CI sample does: the self-test already holds the references to
	// passing their suites).
	NoReference bool
	// NoExamples judges plugin mutants by the contract cases alone,
	// without the plugins' behaviour examples.
	NoExamples bool
}

// Run judges the mutants: each is built into a temporary directory with
// `go build -overlay` and its suite run against it until the first failing
// case, which is then run again alone to confirm the kill (a timing case
// failing once on a loaded machine does not count). The unmutated binaries
// must pass their suites first, or Run fails.
func Run(ctx context.Context, mutants []*Mutant, o Options) ([]Result, error) {
	if o.Jobs <= 0 {
		o.Jobs = runtime.GOMAXPROCS(0)
	}
	tmp, err := os.MkdirTemp("", "abkit-mutate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	results := make([]Result, len(mutants))
	var todo []int
	for i, m := range mutants {
		results[i] = Result{Mutant: *m}
		if why, ok := o.Equivalent.Reason(m.Key); ok {
			results[i].Verdict, results[i].Reason = Equivalent, why
			continue
		}
		todo = append(todo, i)
	}
	if !o.NoReference {
		if err := checkReferences(ctx, o, tmp, mutants, todo); err != nil {
			return nil, err
		}
	}

	// Builds are CPU-bound and run Jobs at once; suite runs mostly wait on
	// processes and scripted sleeps and run 2×Jobs at once.
	buildSem := make(chan struct{}, o.Jobs)
	runSem := make(chan struct{}, 2*o.Jobs)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, i := range todo {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		buildSem <- struct{}{}
		go func() {
			defer wg.Done()
			m := mutants[i]
			dir := filepath.Join(tmp, fmt.Sprintf("m%d", i))
			r := &results[i]
			defer os.RemoveAll(dir)
			out, err := buildMutant(ctx, o.Root, dir, m)
			<-buildSem
			if err != nil {
				r.Verdict, r.Reason = NotBuilt, firstLine(out, err)
			} else {
				runSem <- struct{}{}
				judgeMutant(ctx, o, m, filepath.Join(dir, "bin"), r)
				<-runSem
			}
			if ctx.Err() != nil {
				r.Verdict = ""
			}
			if o.Progress != nil {
				mu.Lock()
				o.Progress(*r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return results, ctx.Err()
	}
	return results, nil
}

// checkReferences builds the unmutated binaries of every package a mutant
// builds, once, and runs their suites: the reference must pass before any
// kill means anything.
func checkReferences(ctx context.Context, o Options, tmp string, mutants []*Mutant, todo []int) error {
	builds := map[string]bool{}
	for _, i := range todo {
		builds[mutants[i].Build+"\x00"+mutants[i].Suite+"\x00"+mutants[i].Examples] = true
	}
	var keys []string
	for k := range builds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts := strings.Split(k, "\x00")
		pkg, suite := parts[0], parts[1]
		j := judgement{suite: suite, examples: examplesPath(o.Root, parts[2])}
		bin := filepath.Join(tmp, "ref-"+safeName(pkg))
		if out, err := goBuild(ctx, o.Root, bin, pkg, ""); err != nil {
			return fmt.Errorf("build the unmutated %s: %v\n%s", pkg, err, out)
		}
		first, err := j.judge(ctx, bin)
		if err != nil {
			return fmt.Errorf("the unmutated %s: %w", pkg, err)
		}
		if first != "" {
			return fmt.Errorf("the unmutated %s fails %s; mutation scores mean nothing until the reference passes its suite", pkg, first)
		}
	}
	return nil
}

// judgeMutant runs the mutant's suite against its binary bin and fills
// r's verdict.
func judgeMutant(ctx context.Context, o Options, m *Mutant, bin string, r *Result) {
	j := judgement{suite: m.Suite, examples: examplesPath(o.Root, m.Examples)}
	if o.NoExamples {
		j.examples = ""
	}
	first, jerr := j.judge(ctx, bin)
	switch {
	case jerr != nil:
		r.Verdict, r.KilledBy = Killed, "start"
		return
	case first == "":
		r.Verdict = Survived
		return
	}
	// Confirm: the case alone. A case can fail only because another one
	// crashed the shared process under it, so when it passes alone the
	// whole suite runs again one case at a time, and any failure there
	// confirms.
	again, aerr := j.judgeOne(ctx, bin, first)
	if aerr != nil || again {
		r.Verdict, r.KilledBy = Killed, first
		return
	}
	seq, serr := j.judgeSeq(ctx, bin)
	switch {
	case serr != nil:
		r.Verdict, r.KilledBy = Killed, "start"
	case seq != "":
		r.Verdict, r.KilledBy = Killed, seq
	default:
		r.Verdict, r.Reason = Survived, "only an unconfirmed failure of "+first
	}
}

func safeName(pkg string) string {
	return strings.NewReplacer("/", "_", ".", "_").Replace(strings.TrimPrefix(pkg, "./"))
}

func buildMutant(ctx context.Context, root, dir string, m *Mutant) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, filepath.Base(m.File))
	if err := os.WriteFile(file, m.src, 0o644); err != nil {
		return nil, err
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, m.File): file}})
	if err != nil {
		return nil, err
	}
	ovf := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovf, ov, 0o644); err != nil {
		return nil, err
	}
	return goBuild(ctx, root, filepath.Join(dir, "bin"), m.Build, ovf)
}

func goBuild(ctx context.Context, root, out, pkg, overlay string) ([]byte, error) {
	args := []string{"build", "-ldflags=-s -w", "-o", out}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = root
	return cmd.CombinedOutput()
}

func firstLine(out []byte, err error) string {
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return err.Error()
}

// caseTimeout bounds each case of a mutant's run: a mutant that hangs is
// killed by it; the longest reference case takes a little over 2 s.
const caseTimeout = 10 * time.Second

// judgement is how a mutant's binary is judged: its suite, and for a
// plugin the examples file the suite also runs (empty: none).
type judgement struct {
	suite, examples string
}

func examplesPath(root, rel string) string {
	if rel == "" {
		return ""
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}

// target is bin judged by j's suite.
func (j judgement) target(bin string) judge.Target {
	return judge.Target{Suite: j.suite, Path: bin, Examples: j.examples}
}

// isolation: scenarios are independent sessions, so one runtime process
// serves every case (relaunched if a case kills it), as in the selftest.
// Plugins keep case isolation: a plugin's state may carry from one case to
// the next (rate limits), and that must not decide a verdict.
func (j judgement) isolation() conformance.Isolation {
	if j.suite == SuiteRuntime {
		return conformance.IsolationSuite
	}
	return conformance.IsolationCase
}

// judge runs the suite against bin and returns the first failing case
// (empty when every case passed); an error means the binary could not be
// started.
func (j judgement) judge(ctx context.Context, bin string) (string, error) {
	return j.judgeP(ctx, bin, runtime.GOMAXPROCS(0))
}

// judgeSeq is judge one case at a time.
func (j judgement) judgeSeq(ctx context.Context, bin string) (string, error) {
	return j.judgeP(ctx, bin, 1)
}

func (j judgement) judgeP(ctx context.Context, bin string, parallel int) (string, error) {
	return j.target(bin).FirstBad(ctx, conformance.Options{Isolation: j.isolation(), Timeout: caseTimeout, Parallel: parallel})
}

// judgeOne runs one case alone and reports whether it failed.
func (j judgement) judgeOne(ctx context.Context, bin, id string) (bool, error) {
	rep, err := j.target(bin).Run(ctx, conformance.Options{
		Isolation: j.isolation(), Timeout: caseTimeout, Parallel: 1,
		Run: []*regexp.Regexp{judge.Exactly(id)},
	})
	if err != nil {
		return false, err
	}
	return !rep.OK(), nil
}

// Select keeps the mutants matching o.Run, then o.Sample per suite.
func Select(ms []*Mutant, run *regexp.Regexp, sample int) []*Mutant {
	var kept []*Mutant
	for _, m := range ms {
		if run == nil || run.MatchString(m.Key) || run.MatchString(m.Pos()) {
			kept = append(kept, m)
		}
	}
	if sample <= 0 {
		return kept
	}
	var out []*Mutant
	for _, g := range judge.ByGroup([]string{SuiteRuntime, SuitePlugin}, kept, func(m *Mutant) string { return m.Suite }) {
		ms := g.Items
		sort.SliceStable(ms, func(i, j int) bool { return hash(ms[i].Key) < hash(ms[j].Key) })
		if len(ms) > sample {
			ms = ms[:sample]
		}
		out = append(out, ms...)
	}
	// Back to source order.
	idx := map[*Mutant]int{}
	for i, m := range kept {
		idx[m] = i
	}
	sort.Slice(out, func(i, j int) bool { return idx[out[i]] < idx[out[j]] })
	return out
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return string(h[:8])
}

// Summarize tallies results per suite (suites with no mutant are left out).
func Summarize(rs []Result) []Summary {
	var out []Summary
	for _, g := range judge.ByGroup([]string{SuiteRuntime, SuitePlugin}, rs, func(r Result) string { return r.Suite }) {
		sum := Summary{Suite: g.Name, Mutants: len(g.Items)}
		for _, r := range g.Items {
			switch r.Verdict {
			case Killed:
				sum.Killed++
			case Survived:
				sum.Survived++
			case NotBuilt:
				sum.NotBuilt++
			case Equivalent:
				sum.Equivalent++
			}
		}
		if n := sum.Killed + sum.Survived; n > 0 {
			sum.Rate = float64(sum.Killed) * 100 / float64(n)
		}
		out = append(out, sum)
	}
	return out
}
