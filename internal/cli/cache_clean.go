package cli

import (
	"context"
	"fmt"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/spf13/cobra"
)

// cacheCleanOpts are what `abctl cache clean` runs with; it has no flags of
// its own.
type cacheCleanOpts struct{}

func newCacheCleanCmd(o *globalOpts) *cobra.Command {
	cc := &cacheCleanOpts{}
	return &cobra.Command{
		Use:     "clean",
		Short:   "Remove every cached plugin binary description",
		Long:    "Remove every cached plugin binary description, so the next load of a dir: source describes each binary afresh. Other files in the directory are left alone.",
		Example: "  abctl cache clean\n  abctl cache clean -o json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCacheClean(cmd.Context(), o, cc)
		},
	}
}

func runCacheClean(_ context.Context, o *globalOpts, _ *cacheCleanOpts) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	dir, n, err := catalog.CleanCache(o.app.Catalog)
	if err != nil {
		return &ExitError{Code: ExitRead, Err: fmt.Errorf("cache %s: %w", dir, err)}
	}
	if format != "table" {
		return writeOut(writeData(o.app.Out, format, struct {
			Dir     string `json:"dir"`
			Removed int    `json:"removed"`
		}{dir, n}))
	}
	if dir == "" {
		fmt.Fprintln(o.app.Err, "abctl: the description cache is off; nothing to clean")
		return nil
	}
	fmt.Fprintf(o.app.Err, "removed %d cached description(s) from %s\n", n, dir)
	return nil
}
