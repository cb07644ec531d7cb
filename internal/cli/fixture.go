package cli

import (
	"github.com/spf13/cobra"
)

func newFixtureCmd(o *globalOpts) *cobra.Command {
	c := &cobra.Command{
		Use:   "fixture",
		Short: "Create and check recorded-exchange fixtures",
		Long: `Work with fixture files: one recorded exchange per file, in the text format
of docs/fixtures.md. Fixtures are redacted when they are created:
credential headers, API-key query parameters and well-known key prefixes
in bodies are replaced by markers such as [REDACTED:authorization].`,
		Example: "  abctl fixture import --sse body.sse --out chat.fixture\n  abctl fixture import --har session.har --out fixtures/web\n  abctl fixture check fixtures/inference/*.fixture",
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = groupRunE
	c.AddCommand(newFixtureImportCmd(o), newFixtureCheckCmd(o))
	return c
}
