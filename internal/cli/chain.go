package cli

import (
	"context"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/spf13/cobra"
)

func newChainCmd(o *globalOpts) *cobra.Command {
	c := &cobra.Command{
		Use:   "chain",
		Short: "Validate and show chain files",
		Long: `Work with chain files: YAML files that say which plugins run in which order
per direction (family P), which agent extensions claim which slots (family D)
and which hooks a hook bus runs (family H). The format is in docs/chains.md.
Plugins are looked up in the catalog the --source flags name (default
builtin).`,
		Example: "  abctl chain validate chain.yaml\n  abctl chain show chain.yaml --source file:catalog.yaml",
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = groupRunE
	c.AddCommand(newChainValidateCmd(o), newChainShowCmd(o))
	return c
}

func completeYAML(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// chainInputs returns what both chain commands start from: the output
// format, the catalog and the chain file at path.
func (o *globalOpts) chainInputs(ctx context.Context, path string) (string, *catalog.Catalog, *catalog.ChainFile, error) {
	format, cat, err := o.formatAndCatalog(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	cf, err := catalog.ReadChainFile(path)
	if err != nil {
		return "", nil, nil, err
	}
	return format, cat, cf, nil
}
