package runtimesuite

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/broken"
	"github.com/abkit/abkit/internal/refruntime"
)

// Impl is one implementation the self-test runs.
type Impl struct {
	Name string
	// Kind is "runtime" or "plugin".
	Kind string
	Path string
	// Rule is the rule a broken runtime breaks; Cases the exact cases a
	// broken plugin must fail. Both empty: a reference, which must pass.
	Rule  string
	Cases []string
	// Choice is set on a runtime that declares another allowed
	// alternative at this choice point: it must pass, and fail a case of
	// the choice when judged --strict.
	Choice string
}

// Reference reports whether the implementation must pass everything.
func (i Impl) Reference() bool { return i.Rule == "" && i.Cases == nil && i.Choice == "" }

// BuildImpls builds, into dir, the reference runtime, every broken runtime,
// the example plugins and the plugin suite's broken plugins, from the module
// at root, in one go build.
func BuildImpls(ctx context.Context, root, dir string) ([]Impl, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator),
		"./cmd/abkit-runtime", "./internal/refruntime/brokenruntime", "./internal/refruntime/alt/...", "./examples/plugins/...", "./internal/conformance/testdata/broken")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the implementations: %v\n%s", err, out)
	}
	return ImplsIn(dir)
}

// linkedIn returns the keys of m, names of the broken and the alternative
// reference runtimes, that stand as files in dir, sorted.
func linkedIn[K ~string, V any](dir string, m map[K]V) []string {
	var names []string
	for k := range m {
		if _, err := os.Stat(filepath.Join(dir, string(k))); err == nil {
			names = append(names, string(k))
		}
	}
	sort.Strings(names)
	return names
}

// ImplsIn returns the implementations built into dir (by BuildImpls or
// by hand): abkit-runtime is the reference runtime, a file named after a
// refruntime bug is that broken runtime (the binary "brokenruntime" is all
// of them, linked under each bug's name), the binary "broken" is the plugin
// suite's broken plugins (linked under each of their names), and every
// other file is an example plugin, which must pass.
func ImplsIn(dir string) ([]Impl, error) {
	var impls []Impl
	if _, err := os.Stat(filepath.Join(dir, "abkit-runtime")); err == nil {
		impls = append(impls, Impl{Name: "abkit-runtime", Kind: "runtime", Path: filepath.Join(dir, "abkit-runtime")})
	}
	// The broken runtimes are one binary picking its bug by name.
	if err := linkAs(dir, "brokenruntime", slices.Collect(maps.Keys(refruntime.Bugs))); err != nil {
		return nil, err
	}
	for _, b := range linkedIn(dir, refruntime.Bugs) {
		impls = append(impls, Impl{Name: b, Kind: "runtime", Path: filepath.Join(dir, b), Rule: refruntime.Bugs[refruntime.Bug(b)]})
	}
	for _, a := range linkedIn(dir, refruntime.Alts) {
		impls = append(impls, Impl{Name: a, Kind: "runtime", Path: filepath.Join(dir, a), Choice: refruntime.Alts[refruntime.Alt(a)].Choice})
	}
	// The plugin suite's broken plugins are one binary picking its
	// behaviour by name.
	var bps []string
	if _, err := os.Stat(filepath.Join(dir, "broken")); err == nil {
		for name := range broken.Expect {
			bps = append(bps, name)
			if err := os.Link(filepath.Join(dir, "broken"), filepath.Join(dir, name)); err != nil && !os.IsExist(err) {
				return nil, fmt.Errorf("link the broken plugin %s: %w", name, err)
			}
		}
	}
	sort.Strings(bps)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list the implementations: %w", err)
	}
	// The contract-fault corpus (internal/conformance/faults) is judged by
	// its own test, not here.
	skip := map[string]bool{"abkit-runtime": true, "broken": true, "brokenruntime": true, "faulty-plugin": true, "faulty-runtime": true}
	for _, e := range ents {
		n := e.Name()
		_, alt := refruntime.Alts[refruntime.Alt(n)]
		if _, bug := refruntime.Bugs[refruntime.Bug(n)]; bug || alt || skip[n] || slices.Contains(bps, n) || e.IsDir() {
			continue
		}
		if _, isBroken := broken.Expect[n]; isBroken {
			continue // a stale link without the "broken" binary
		}
		impls = append(impls, Impl{Name: n, Kind: "plugin", Path: filepath.Join(dir, n)})
	}
	for _, n := range bps {
		impls = append(impls, Impl{Name: n, Kind: "plugin", Path: filepath.Join(dir, n), Cases: append([]string{}, broken.Expect[n]...)})
	}
	if len(impls) == 0 {
		return nil, fmt.Errorf("no implementations in %s", dir)
	}
	return impls, nil
}

// Row is one line of the self-test table.
type Row struct {
	Impl     Impl
	Expected string
	CaughtBy []string
	OK       bool
	Problem  string
	// Details quotes the failures of a reference that failed, so that the
	// reason is in the log and not only the case IDs.
	Details string
}

// failureDetails is the failure text of each failed case, for a row.
func failureDetails(failed []*conformance.CaseResult) string {
	var b strings.Builder
	for _, f := range failed {
		fmt.Fprintf(&b, "%s:\n", f.ID)
		for _, x := range f.Failures {
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(x.String(), "\n", "\n  "))
		}
	}
	return b.String()
}

// Selftest runs every implementation against its suite and judges it:
// references must pass every case; a broken runtime must fail at least one
// case citing its rule; a runtime declaring another allowed alternative
// must pass, and fail a case of that choice under --strict; a broken plugin
// must fail exactly its expected cases.
func Selftest(ctx context.Context, impls []Impl, opts conformance.Options) ([]Row, error) {
	// Implementations run concurrently: a suite run mostly waits (scripted
	// sleeps, timeouts, process start-up), so 2×GOMAXPROCS of them at once
	// keep the cores busy; rows keep the order of impls.
	//
	// Broken implementations start first: the cases they fail wait out
	// their timeouts, so they are the long runs, and the short reference
	// runs fill the tail instead of a long run starting last.
	rows := make([]Row, len(impls))
	order := make([]int, len(impls))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return !impls[order[a]].Reference() && impls[order[b]].Reference() })
	// One implementation per core: each runs its own cases in parallel and
	// starts processes, so more oversubscribes the machine and turns timing
	// cases (P14, D20) into noise.
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, i := range order {
		im := impls[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			rows[i] = judge(ctx, im, opts)
		}()
	}
	wg.Wait()
	return rows, nil
}

// judge runs one implementation against its suite and judges the report.
func judge(ctx context.Context, im Impl, opts conformance.Options) Row {
	var rep *conformance.Report
	var err error
	// A reference owes abkit's alternative at every choice, and a broken
	// plugin's expected cases are written against it: both are judged
	// strict. Broken runtimes are judged as a user's run would be, so
	// their bug must be caught by a case that counts.
	opts.Strict = opts.Strict || im.Reference() || (im.Kind == "plugin" && im.Cases != nil)
	if im.Choice != "" && len(opts.Run) == 0 {
		// An alternative changes one family's behaviour: only that
		// family's cases run (case IDs start with their rule), twice.
		opts.Run = []*regexp.Regexp{regexp.MustCompile("^" + im.Choice[:1])}
	}
	if im.Kind == "runtime" {
		// Scenarios are independent sessions, so one runtime process
		// serves all cases; it is relaunched if a case kills it.
		ro := opts
		if ro.Isolation == "" {
			ro.Isolation = conformance.IsolationSuite
		}
		rep, err = conformance.Run(ctx, Suite(), Launcher{Path: im.Path, StartTimeout: opts.Host.StartTimeout}, ro)
	} else {
		rep, err = conformance.Run(ctx, conformance.PluginSuite(), conformance.Binary(im.Path, opts.Host), opts)
	}
	row := Row{Impl: im, Expected: "pass"}
	if err != nil {
		row.Problem = err.Error()
		return row
	}
	var failed []*conformance.CaseResult
	for i := range rep.Results {
		if rep.Results[i].Status.Bad() {
			failed = append(failed, &rep.Results[i])
			row.CaughtBy = append(row.CaughtBy, rep.Results[i].ID)
		}
	}
	sort.Strings(row.CaughtBy)
	switch {
	case im.Choice != "":
		row.Expected = "pass; --strict: " + im.Choice
		row.OK = len(failed) == 0
		if !row.OK {
			row.Problem = "a runtime declaring an allowed alternative failed"
			row.Details = failureDetails(failed)
			break
		}
		so := opts
		so.Strict = true
		if so.Isolation == "" {
			so.Isolation = conformance.IsolationSuite
		}
		srep, err := conformance.Run(ctx, Suite(), Launcher{Path: im.Path, StartTimeout: opts.Host.StartTimeout}, so)
		if err != nil {
			row.OK, row.Problem = false, "--strict: "+err.Error()
			break
		}
		var strictFails []string
		for _, r := range srep.Results {
			if r.Status.Bad() && (r.Choice == im.Choice || slices.ContainsFunc(r.Failures, func(f conformance.Failure) bool { return f.Choice == im.Choice })) {
				strictFails = append(strictFails, r.ID)
			}
		}
		row.CaughtBy = strictFails
		if len(strictFails) == 0 {
			row.OK, row.Problem = false, "--strict did not fail a case of "+im.Choice
		}
	case im.Reference():
		row.OK = len(failed) == 0
		if !row.OK {
			row.Problem = "a reference implementation failed"
			row.Details = failureDetails(failed)
		}
	case im.Rule != "":
		// A runtime bug shows wherever its behaviour is observed, so
		// other cases may fail too; it must be caught by a case that
		// cites its rule, and the table lists the citing cases first.
		row.Expected = im.Rule
		var citing, other []string
		for _, f := range failed {
			if slices.Contains(f.Rules, im.Rule) {
				citing = append(citing, f.ID)
			} else {
				other = append(other, f.ID)
			}
		}
		row.CaughtBy = append(citing, other...)
		row.OK = len(citing) > 0
		if !row.OK {
			row.Problem = "not caught by a case citing " + im.Rule
		}
	default:
		want := append([]string{}, im.Cases...)
		sort.Strings(want)
		row.Expected = strings.Join(want, ", ")
		row.OK = slices.Equal(want, row.CaughtBy)
		if !row.OK {
			row.Problem = "failed cases differ from the expected ones"
		}
	}
	return row
}

// WriteTable prints the rows: implementation, kind, expected rule, caught
// by, verdict.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "IMPLEMENTATION\tKIND\tEXPECTED\tCAUGHT BY\tOK")
	for _, r := range rows {
		caught := strings.Join(r.CaughtBy, ", ")
		if caught == "" {
			caught = "-"
		}
		if len(caught) > 90 {
			caught = caught[:87] + "..."
		}
		ok := "ok"
		if !r.OK {
			ok = "MISS: " + r.Problem
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Impl.Name, r.Impl.Kind, r.Expected, caught, ok)
	}
	return tw.Flush()
}

// AllOK reports whether every row passed.
func AllOK(rows []Row) bool {
	for _, r := range rows {
		if !r.OK {
			return false
		}
	}
	return len(rows) > 0
}

// linkAs hard-links dir/bin under each of names, when dir holds bin.
func linkAs[N ~string](dir, bin string, names []N) error {
	if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
		return nil
	}
	for _, n := range names {
		if err := os.Link(filepath.Join(dir, bin), filepath.Join(dir, string(n))); err != nil && !os.IsExist(err) {
			return fmt.Errorf("link %s as %s: %w", bin, n, err)
		}
	}
	return nil
}
