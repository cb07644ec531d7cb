package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// versionOpts are what `abctl version` runs with; it has no flags of its
// own (-o comes from the global options).
type versionOpts struct{}

func newVersionCmd(o *globalOpts) *cobra.Command {
	v := &versionOpts{}
	return &cobra.Command{
		Use:   "version",
		Short: "Print abctl's version, commit and build date",
		Long: `Print abctl's module version, the commit it was built from and the
build date. A release build carries all three; a build inside a git checkout
(make build, go install -buildvcs=auto ./cmd/abctl) carries the commit and
its time; go install …@<commit> recovers them from the pseudo-version; go
run knows none of them and says "(devel)".`,
		Example: "  abctl version\n  abctl --version\n  abctl version -o json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersion(cmd.Context(), o, v)
		},
	}
}

func runVersion(_ context.Context, o *globalOpts, _ *versionOpts) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	v := o.app.build()
	if format != "table" {
		return writeOut(writeData(o.app.Out, format, v))
	}
	_, err = fmt.Fprintf(o.app.Out, "abctl %s\n", v)
	return writeOut(err)
}
