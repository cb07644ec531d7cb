package cli

import (
	"github.com/spf13/cobra"
)

func newCatalogCmd(o *globalOpts) *cobra.Command {
	c := &cobra.Command{
		Use:   "catalog",
		Short: "List, show and lint the plugins of catalog sources",
		Long: `Work with plugin catalogs. A catalog is read from one or more sources,
given with --source (repeatable) and combined, sorted by name:

  builtin      the example plugins compiled into abctl (the default)
  dir:PATH     every plugin binary in PATH, described through the plugin
               handshake; descriptions are cached per binary
  file:PATH    a catalog file in YAML or JSON (the form 'catalog list -o json'
               prints)
  url:URL      a gateway's plugin list or live-chain endpoint`,
		Example: "  abctl catalog list --source builtin --source file:extra.yaml\n  abctl catalog show mcp-parser",
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = groupRunE
	c.AddCommand(newCatalogListCmd(o), newCatalogShowCmd(o), newCatalogLintCmd(o))
	return c
}
