package cli

import (
	"github.com/spf13/cobra"
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
	c.AddCommand(newCacheCleanCmd(o))
	return c
}
