package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/spf13/cobra"
)

// fixtureCheckOpts are what `abctl fixture check` runs with: the FIXTURE
// arguments.
type fixtureCheckOpts struct {
	files []string
}

func newFixtureCheckCmd(o *globalOpts) *cobra.Command {
	fc := &fixtureCheckOpts{}
	return &cobra.Command{
		Use:   "check FIXTURE...",
		Short: "Parse fixture files and report the first error of each",
		Long: `Parse fixture files strictly. Each error names the file, line and field. The
exit code is 3 when any file is malformed.`,
		Example: "  abctl fixture check fixtures/*/*.fixture",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr(errors.New("give at least one FIXTURE"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			fc.files = args
			return runFixtureCheck(cmd.Context(), o, fc)
		},
	}
}

func runFixtureCheck(_ context.Context, o *globalOpts, fc *fixtureCheckOpts) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	type result struct {
		File  string `json:"file"`
		OK    bool   `json:"ok"`
		Error string `json:"error,omitempty"`
	}
	results := []result{}
	bad := 0
	for _, a := range fc.files {
		if _, err := fixture.ReadFile(a); err != nil {
			// The message goes to stderr in every format; json and yaml
			// also carry it in the data.
			fmt.Fprintf(o.app.Err, "%s\n", termsafe.String(err.Error()))
			results = append(results, result{File: a, Error: err.Error()})
			bad++
			continue
		}
		results = append(results, result{File: a, OK: true})
		if format == "table" {
			fmt.Fprintf(o.app.Out, "%s: ok\n", a)
		}
	}
	if format != "table" {
		if err := writeData(o.app.Out, format, struct {
			Files []result `json:"files"`
		}{results}); err != nil {
			return err
		}
	}
	if bad > 0 {
		return &ExitError{Code: ExitRead}
	}
	return nil
}
