package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance/faults"
	"github.com/abkit/abkit/internal/conformance/mutation"
	"github.com/abkit/abkit/internal/testbin"
	"github.com/spf13/cobra"
)

type mutateOpts struct {
	suite, run, out, equivalent, record string
	jobs, sample                        int
	list, verbose, allowLower           bool
	corpus, corpusOnly, noExamples      bool
}

func newMutateCmd(app *App) *cobra.Command {
	o := &mutateOpts{}
	c := &cobra.Command{
		Use:   "mutate",
		Short: "Mutation-test the suites: fault the reference runtime and the example plugins, count the faults the suites catch",
		Long: `mutate applies mutation operators (negated and moved comparisons, && ↔ ||,
removed !, removed calls and assignments, range loops walked backwards,
changed integer and boolean constants) to the reference runtime
(internal/pipeline, dispatch, hookbus, sse, refruntime) and to the example
plugins' hook methods. Each mutant is built with 'go build -overlay' (the tree
is not touched) and judged by its suite: killed when a case fails (confirmed
by running that case again alone), survived otherwise. It prints the kill
rate per suite and every survivor with file:line. Mutants listed in the
reviewed equivalent file are not run and are printed with their reason.
Run it inside the abkit module. Exit 1 when the list names a mutant that no
longer exists (review it), a reference fails its suite, or --record would
lower a recorded kill rate (the figures in FILE are a floor: raise them by
recording a better run; --allow-lower records a lower one on purpose).`,
		Example: `  conformance mutate                      # both suites, every mutant
  conformance mutate --suite runtime --run sdk/sse
  conformance mutate --sample 40 -o json  # 40 mutants per suite, the same every time
  conformance mutate --list               # the mutants, not run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.exec(cmd, app) },
	}
	f := c.Flags()
	f.StringVar(&o.suite, "suite", "all", "runtime, plugin or all")
	f.StringVar(&o.run, "run", "", "only mutants whose key or file:line matches this regexp")
	f.IntVar(&o.sample, "sample", 0, "keep this many mutants per suite, chosen by a hash of their keys (0: all)")
	f.IntVarP(&o.jobs, "jobs", "j", 0, "mutants built at once (default GOMAXPROCS); twice as many run their suite at once")
	f.StringVarP(&o.out, "output", "o", "text", "output format: text or json")
	f.StringVar(&o.equivalent, "equivalent", "internal/conformance/mutation/equivalent.txt", "reviewed list of equivalent mutants (relative to the module root)")
	f.StringVar(&o.record, "record", "", "write the figures and survivors to FILE (internal/conformance/mutation/killrates.json holds the recorded ones)")
	f.BoolVar(&o.allowLower, "allow-lower", false, "with --record: record figures below the ones in FILE (otherwise a lower kill rate fails the run and FILE is kept)")
	f.BoolVar(&o.list, "list", false, "list the mutants without building or running them")
	f.BoolVar(&o.corpus, "corpus", true, "also run the contract-fault corpus (internal/conformance/faults) and report its kill rate apart")
	f.BoolVar(&o.corpusOnly, "corpus-only", false, "run only the contract-fault corpus, no syntactic mutant")
	f.BoolVar(&o.noExamples, "no-examples", false, "judge plugin mutants by the contract cases alone, without the plugins' behaviour examples")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print every mutant's verdict as it comes")
	return c
}

func moduleRoot() (string, error) {
	mod, err := exec.Command("go", "env", "GOMOD").Output()
	m := strings.TrimSpace(string(mod))
	if err != nil || m == "" || m == os.DevNull {
		return "", usage(errors.New("mutate builds mutants from source: run it inside the abkit module"))
	}
	return filepath.Dir(m), nil
}

func (o *mutateOpts) exec(cmd *cobra.Command, app *App) error {
	if o.out != "text" && o.out != "json" {
		return usage(fmt.Errorf("output format %q: want text or json", o.out))
	}
	if o.suite != "all" && o.suite != mutation.SuiteRuntime && o.suite != mutation.SuitePlugin {
		return usage(fmt.Errorf("suite %q: want runtime, plugin or all", o.suite))
	}
	if o.jobs < 0 || o.sample < 0 {
		return usage(errors.New("-j and --sample must be at least 0"))
	}
	var re *regexp.Regexp
	if o.run != "" {
		var err error
		if re, err = regexp.Compile(o.run); err != nil {
			return usage(fmt.Errorf("--run %q: %w", o.run, err))
		}
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	var targets []mutation.Target
	if o.suite != mutation.SuitePlugin {
		targets = append(targets, mutation.RuntimeTargets()...)
	}
	if o.suite != mutation.SuiteRuntime {
		pt, err := mutation.PluginTargets(root)
		if err != nil {
			return err
		}
		targets = append(targets, pt...)
	}
	all, err := mutation.Enumerate(root, targets)
	if err != nil {
		return err
	}
	eqPath := o.equivalent
	if !filepath.IsAbs(eqPath) {
		eqPath = filepath.Join(root, eqPath)
	}
	eq, err := mutation.LoadEquivalent(eqPath)
	if err != nil {
		return usage(err)
	}
	if o.suite == "all" {
		if stale := eq.Stale(all); len(stale) > 0 {
			return &ExitError{Code: ExitFail, Err: fmt.Errorf("the equivalent list names mutants that no longer exist; review them:\n  %s", strings.Join(stale, "\n  "))}
		}
	}
	ms := mutation.Select(all, re, o.sample)
	if o.list {
		if o.out == "json" {
			return writeJSON(app.Out, ms)
		}
		for _, m := range ms {
			fmt.Fprintf(app.Out, "%s\t%s\t%s\t%s\n", m.Pos(), m.Suite, m.Key, m.Desc)
		}
		fmt.Fprintf(app.Out, "%d mutants\n", len(ms))
		return nil
	}
	if o.corpusOnly {
		ms = nil
	}
	opts := mutation.Options{Root: root, Jobs: o.jobs, Equivalent: eq, NoExamples: o.noExamples}
	if o.verbose {
		opts.Progress = func(r mutation.Result) {
			fmt.Fprintf(app.Err, "%-10s %s %s %s %s\n", r.Verdict, r.Pos(), r.Key, r.Desc, r.KilledBy+r.Reason)
		}
	}
	start := time.Now()
	var rs []mutation.Result
	if len(ms) > 0 {
		if rs, err = mutation.Run(cmd.Context(), ms, opts); err != nil {
			return err
		}
	}
	var contract []mutation.ContractSummary
	var verdicts []faults.Verdict
	if o.corpus || o.corpusOnly {
		if contract, verdicts, err = runCorpus(cmd, app, o.verbose); err != nil {
			return err
		}
	}
	d := time.Since(start)
	if o.record != "" {
		rec := mutation.NewRecord("conformance mutate "+strings.Join(os.Args[2:], " "), d, rs)
		rec.Contract = contract
		if contract != nil {
			rec.ContractDate = rec.Date
		}
		if o.corpusOnly {
			if old, err := mutation.ReadRecord(o.record); err == nil {
				old.Contract, old.ContractDate = contract, rec.Date
				rec = old
			}
		}
		if !o.allowLower {
			if err := notLower(o.record, rec); err != nil {
				_ = writeMutationText(app.Out, rs, d)
				return &ExitError{Code: ExitFail, Err: err}
			}
		}
		if err := rec.Write(o.record); err != nil {
			return err
		}
	}
	if o.out == "json" {
		return writeJSON(app.Out, struct {
			Summaries []mutation.Summary         `json:"summaries"`
			Duration  time.Duration              `json:"duration_ns"`
			Results   []mutation.Result          `json:"results"`
			Contract  []mutation.ContractSummary `json:"contract,omitempty"`
			Faults    []faults.Verdict           `json:"faults,omitempty"`
		}{mutation.Summarize(rs), d, rs, contract, verdicts})
	}
	writeCorpusText(app.Out, contract, verdicts)
	return writeMutationText(app.Out, rs, d)
}

// runCorpus builds the contract-fault corpus and judges it: every faulty
// plugin under the plugin suite (no behaviour examples), every faulty
// runtime under the runtime suite.
func runCorpus(cmd *cobra.Command, app *App, verbose bool) ([]mutation.ContractSummary, []faults.Verdict, error) {
	dir, err := os.MkdirTemp("", "abkit-corpus-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	if err := testbin.Build(cmd.Context(), dir, faults.Packages...); err != nil {
		return nil, nil, err
	}
	if bad, err := faults.RunControls(cmd.Context(), dir); err != nil {
		return nil, nil, err
	} else if len(bad) > 0 {
		return nil, nil, &ExitError{Code: ExitFail, Err: fmt.Errorf("the corpus harness fails without a fault, so its kills mean nothing:\n  %s", strings.Join(bad, "\n  "))}
	}
	vs, err := faults.Run(cmd.Context(), faults.Options{Dir: dir})
	if err != nil {
		return nil, nil, err
	}
	var out []mutation.ContractSummary
	for _, s := range faults.Summarize(vs) {
		cs := mutation.ContractSummary{Role: s.Role, Faults: s.Faults, Killed: s.Killed, Rate: s.Rate, Survivors: []string{}}
		for _, v := range vs {
			if v.Role == s.Role && !v.Killed {
				cs.Survivors = append(cs.Survivors, v.Name+" ("+v.Rule+")")
			}
		}
		out = append(out, cs)
	}
	if verbose {
		for _, v := range vs {
			fmt.Fprintf(app.Err, "%-8s %-8s %-34s %-4s %s\n", v.Role, map[bool]string{true: "killed", false: "survived"}[v.Killed], v.Name, v.Rule, strings.Join(v.KilledBy, ", "))
		}
	}
	return out, vs, nil
}

func writeCorpusText(w io.Writer, cs []mutation.ContractSummary, vs []faults.Verdict) {
	for _, v := range vs {
		if !v.Killed {
			fmt.Fprintf(w, "contract fault survived: %s %s (%s): %s\n", v.Role, v.Name, v.Rule, v.Story)
		}
	}
	for _, s := range cs {
		fmt.Fprintf(w, "contract corpus, %s suite: %d faults, %d killed by a case citing the fault's rule: kill rate %.1f%% (no behaviour examples)\n", s.Role, s.Faults, s.Killed, s.Rate)
	}
}

func writeMutationText(w io.Writer, rs []mutation.Result, d time.Duration) error {
	for _, v := range []mutation.Verdict{mutation.Survived, mutation.Equivalent, mutation.NotBuilt} {
		var n int
		for _, r := range rs {
			if r.Verdict != v {
				continue
			}
			if n == 0 {
				fmt.Fprintf(w, "%s:\n", v)
			}
			n++
			fmt.Fprintf(w, "  %s  %s  %s", r.Pos(), r.Key, r.Desc)
			if r.Reason != "" {
				fmt.Fprintf(w, "  (%s)", r.Reason)
			}
			fmt.Fprintln(w)
		}
		if n > 0 {
			fmt.Fprintln(w)
		}
	}
	for _, s := range mutation.Summarize(rs) {
		fmt.Fprintf(w, "%s suite: %d mutants, %d killed, %d survived, %d equivalent, %d not built: kill rate %.1f%%\n",
			s.Suite, s.Mutants, s.Killed, s.Survived, s.Equivalent, s.NotBuilt, s.Rate)
	}
	_, err := fmt.Fprintf(w, "in %s\n", d.Round(time.Second))
	return err
}

// notLower reports a suite whose kill rate in rec is below the one
// recorded in path (a missing file records anything).
func notLower(path string, rec *mutation.Record) error {
	old, err := mutation.ReadRecord(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var low []string
	for _, s := range rec.Summaries {
		for _, o := range old.Summaries {
			if o.Suite == s.Suite && s.Killed+s.Survived > 0 && s.Rate < o.Rate {
				low = append(low, fmt.Sprintf("%s suite %.1f %% (recorded %.1f %% on %s)", s.Suite, s.Rate, o.Rate, old.Date))
			}
		}
	}
	if len(low) > 0 {
		return fmt.Errorf("kill rate fell: %s; %s is kept. Find the survivors above and add cases or examples, or record the lower figure on purpose with --allow-lower", strings.Join(low, ", "), path)
	}
	return nil
}
