package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/abkit/abkit/internal/catalog"
)

func newCacheCmd(o *globalOpts) *cobra.Command {
	c := &cobra.Command{
		Use:   "cache",
		Short: "Manage the cache of plugin binary descriptions",
		Long: `A dir: source starts each plugin binary once to ask what it serves and
caches the answer, keyed by the binary's path, size and modification time,
so later listings start nothing. Only definite answers are cached: a
description, or "not a plugin" from a binary that answered or exited in
time. A binary that was too slow to start is described again next time.
The cache lives in the user cache directory (abkit/describe). --no-cache
bypasses it for one command.`,
		Example: "  abctl cache clean",
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = groupRunE
	c.AddCommand(&cobra.Command{
		Use:     "clean",
		Short:   "Remove every cached plugin binary description",
		Long:    "Remove every cached plugin binary description, so the next load of a dir: source describes each binary afresh. Other files in the directory are left alone.",
		Example: "  abctl cache clean\n  abctl cache clean -o json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
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
		},
	})
	return c
}
