package cli

import (
	"context"
	"fmt"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/spf13/cobra"
)

// lintOutput is the JSON and YAML form of `catalog lint`.
type lintOutput struct {
	Findings []catalog.Finding `json:"findings"`
}

// catalogLintOpts are what `abctl catalog lint` runs with; it has no flags
// of its own.
type catalogLintOpts struct{}

func newCatalogLintCmd(o *globalOpts) *cobra.Command {
	l := &catalogLintOpts{}
	return &cobra.Command{
		Use:   "lint",
		Short: "Check the catalog against the contract rules; exit 1 on findings",
		Long: `Check every plugin of the catalog sources against the rules that need no
traffic: unique names (P1), capabilities static across two instances (P2),
descriptions (P5), requires and requires_any naming plugins in the catalog
(P7, P8), extension points, budgets, priorities and slot names (D1, D3, D4,
D17), hook specs (H1, H3), configuration schemas (C1) and the JSON Schemas
of declared extensions (X1).

Each finding names the plugin, the rule ID and the fix. The exit code is 1
when there are findings.`,
		Example: "  abctl catalog lint\n  abctl catalog lint --source file:catalog.yaml -o json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCatalogLint(cmd.Context(), o, l)
		},
	}
}

func runCatalogLint(ctx context.Context, o *globalOpts, _ *catalogLintOpts) error {
	format, cat, err := o.formatAndCatalog(ctx)
	if err != nil {
		return err
	}
	fs := catalog.Lint(cat)
	return reportFindings(o, format, fs, fmt.Sprintf("%d plugin(s)", len(cat.Plugins)))
}
