package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/mutation"
	"github.com/abkit/abkit/internal/conformance/runtimesuite"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/spf13/cobra"
)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newSelftestCmd(app *App) *cobra.Command {
	var parallel int
	var binDir string
	c := &cobra.Command{
		Use:   "selftest",
		Short: "Build the reference and broken implementations and check the suites catch every broken one",
		Long: `selftest builds (from the abkit module in the current directory) the
reference runtime, the broken runtimes, the example plugins and the broken
plugins, runs the runtime or plugin suite against each, and prints a table:
implementation, expected rule or cases, the cases that caught it. Every
reference must pass; every broken runtime must be caught by a case citing its
rule; every broken plugin must fail exactly its expected cases. Exit 1 on any
miss or false failure. --bin DIR skips the build and runs the
implementations already in DIR (see runtimesuite.ImplsIn for the naming).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if parallel < 0 {
				return usage(errors.New("-p must be at least 0"))
			}
			var impls []runtimesuite.Impl
			var err error
			if binDir != "" {
				if impls, err = runtimesuite.ImplsIn(binDir); err != nil {
					return usage(fmt.Errorf("--bin: %w", err))
				}
				return runSelftest(cmd, app, impls, parallel)
			}
			mod, err := exec.Command("go", "env", "GOMOD").Output()
			if err != nil || strings.TrimSpace(string(mod)) == "" || strings.TrimSpace(string(mod)) == os.DevNull {
				return usage(errors.New("selftest builds the implementations from source: run it inside the abkit module"))
			}
			dir, err := os.MkdirTemp("", "abkit-selftest-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			impls, err = runtimesuite.BuildImpls(cmd.Context(), filepath.Dir(strings.TrimSpace(string(mod))), dir)
			if err != nil {
				return err
			}
			return runSelftest(cmd, app, impls, parallel)
		},
	}
	c.Flags().IntVarP(&parallel, "parallel", "p", 0, "cases run at once (default GOMAXPROCS)")
	c.Flags().StringVar(&binDir, "bin", "", "run the implementations already built in DIR instead of building them")
	return c
}

func runSelftest(cmd *cobra.Command, app *App, impls []runtimesuite.Impl, parallel int) error {
	// Every implementation here is known: none hangs except where a case
	// with its own deadline checks it (P14, P28), so the case, handshake
	// and call bounds are hang guards only, and a busy machine cannot turn
	// a slow answer into a verdict.
	guard := time.Minute
	rows, err := runtimesuite.Selftest(cmd.Context(), impls, conformance.Options{Parallel: parallel, Timeout: guard,
		Host: pluginhost.Options{StartTimeout: guard, CallTimeout: guard}})
	if err != nil {
		return err
	}
	if err := runtimesuite.WriteTable(app.Out, rows); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Details != "" {
			fmt.Fprintf(app.Err, "\n%s failed:\n%s", r.Impl.Name, r.Details)
		}
	}
	// The mutation kill rates are too slow to measure here (make mutate);
	// the table carries the recorded ones, and TestSample keeps a fixed
	// sample of their verdicts in every go test.
	if rec, err := mutation.Recorded(); err == nil && len(rec.Summaries) > 0 {
		fmt.Fprintf(app.Out, "\nmutation kill rates (recorded %s, %s):\n", rec.Date, rec.Command)
		for _, s := range rec.Summaries {
			fmt.Fprintf(app.Out, "  %-8s %5.1f%%  %d killed, %d survived, %d equivalent, %d not built of %d mutants\n",
				s.Suite, s.Rate, s.Killed, s.Survived, s.Equivalent, s.NotBuilt, s.Mutants)
		}
		if len(rec.Contract) > 0 {
			fmt.Fprintf(app.Out, "contract-fault corpus (recorded %s, no behaviour examples):\n", rec.ContractDate)
			for _, s := range rec.Contract {
				fmt.Fprintf(app.Out, "  %-8s %5.1f%%  %d of %d faults killed by a case citing the fault's rule\n", s.Role, s.Rate, s.Killed, s.Faults)
			}
		}
	}
	if !runtimesuite.AllOK(rows) {
		return &ExitError{Code: ExitFail, Err: fmt.Errorf("selftest: a reference implementation failed or a broken one was not caught")}
	}
	fmt.Fprintf(app.Out, "\nselftest: %d implementations, all as expected\n", len(rows))
	return nil
}
