package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance/runtimesuite"
)

// exploreOpts are run's exploration flags.
type exploreOpts struct {
	n         int
	seed      uint64
	seedSet   bool
	scenario  string
	reference string
}

// referencePath is the reference runtime to compare with: --reference,
// else abkit-runtime next to this binary, else in PATH.
func referencePath(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "abkit-runtime")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("abkit-runtime"); err == nil {
		return p, nil
	}
	return "", errors.New("exploration compares the runtime with abkit's reference runtime, and no abkit-runtime was found next to conformance or in PATH: build it (go build -o bin/ ./cmd/abkit-runtime) and give --reference bin/abkit-runtime")
}

// runExplore runs --explore N or --scenario FILE against the runtime.
func runExplore(ctx context.Context, app *App, o *runOpts) error {
	x := o.x
	if o.runtime == "" {
		return usage(errors.New("--explore and --scenario explore a runtime: give --runtime BIN"))
	}
	if x.n < 0 {
		return usage(errors.New("--explore N needs N ≥ 1"))
	}
	refPath, err := referencePath(x.reference)
	if err != nil {
		return usage(err)
	}
	launch := func(path string) (*runtimesuite.Runtime, error) {
		r, err := runtimesuite.Launcher{Path: path, Groups: app.Groups}.LaunchRuntime(ctx)
		if err != nil {
			return nil, &ExitError{Code: ExitLoad, Err: err}
		}
		return r, nil
	}
	test, err := launch(o.runtime)
	if err != nil {
		return err
	}
	defer test.Close()
	ref, err := launch(refPath)
	if err != nil {
		return err
	}
	defer ref.Close()
	e := &runtimesuite.Explorer{Test: test, Ref: ref, Strict: o.strict,
		Fresh: func(ctx context.Context) (*runtimesuite.Runtime, error) {
			return runtimesuite.Launcher{Path: o.runtime, Groups: app.Groups}.LaunchRuntime(ctx)
		}}
	// A crash makes the explorer start the runtime again: close the copy
	// it ends with, not only the first.
	defer func() { e.Test.Close() }()
	w := app.Out
	if x.scenario != "" {
		sc, err := runtimesuite.LoadScenario(x.scenario)
		if err != nil {
			return usage(err)
		}
		d, refObs, gotObs := e.Check(ctx, sc)
		if o.trace {
			writeEvents(w, "reference", refObs.Events)
			writeEvents(w, "runtime", gotObs.Events)
		}
		if d == nil {
			fmt.Fprintf(w, "scenario %s: %s does what abkit's reference does\n", x.scenario, test.Describe().Name)
			return nil
		}
		fmt.Fprintf(w, "scenario %s: %s\n", x.scenario, d)
		if !e.Counts(d) {
			fmt.Fprintf(w, "(the runtime declares %s; the difference counts only with --strict)\n", d.Choice)
			return nil
		}
		return &ExitError{Code: ExitFail}
	}
	seed := x.seed
	if !x.seedSet {
		seed = uint64(time.Now().UnixNano())
	}
	fmt.Fprintf(w, "explore: runtime %q (%s) against abkit's reference (%s), seed %d, %d scenarios\n", test.Describe().Name, o.runtime, refPath, seed, x.n)
	t0 := time.Now()
	found, choices := e.Explore(ctx, seed, x.n, nil)
	fmt.Fprintf(w, "explored %d scenarios in %.1fs: %d differences", x.n, time.Since(t0).Seconds(), len(found))
	if len(choices) > 0 {
		fmt.Fprintf(w, " (and %d at choices the runtime declares otherwise, which count only with --strict)", len(choices))
	}
	fmt.Fprintln(w)
	dir := o.artifacts
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, f := range found {
		path := filepath.Join(dir, fmt.Sprintf("conformance-explore-%d-%d.json", seed, f.Index))
		if err := runtimesuite.WriteScenario(path, f.Scenario); err != nil {
			return err
		}
		b, _ := json.Marshal(f.Scenario)
		fmt.Fprintf(w, "\ndifference %d of %d: rule %s, scenario #%d of seed %d\n  %s\n", i+1, len(found), f.Diff.Rule, f.Index, seed, strings.ReplaceAll(f.Diff.String(), "\n", "\n  "))
		fmt.Fprintf(w, "  shrunk from %d to %d parts in %d runs, written to %s:\n  %s\n", f.From, f.To, f.Trials, path, b)
		if f.NeedsHistory {
			fmt.Fprintf(w, "  the shrunk scenario differs only after the earlier scenarios of the run (on a fresh runtime process it does not): the runtime keeps state across runs; rerun with --seed\n")
		}
		fmt.Fprintf(w, "  rerun: conformance run --runtime %s --scenario %s\n", o.runtime, path)
		fmt.Fprintf(w, "    (or all of them: conformance run --runtime %s --explore %d --seed %d)\n", o.runtime, x.n, seed)
	}
	if len(found) > 0 {
		return &ExitError{Code: ExitFail}
	}
	return nil
}

func writeEvents(w io.Writer, who string, evs []runtimesuite.Event) {
	fmt.Fprintf(w, "%s:\n", who)
	for _, ev := range evs {
		fmt.Fprintf(w, "  %-4s %s\n", ev.Rule, ev.Text)
	}
}
