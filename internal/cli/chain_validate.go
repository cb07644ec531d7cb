package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/spf13/cobra"
)

// chainValidateOpts are what `abctl chain validate` runs with: the CHAIN
// argument.
type chainValidateOpts struct {
	chain string
}

func newChainValidateCmd(o *globalOpts) *cobra.Command {
	v := &chainValidateOpts{}
	return &cobra.Command{
		Use:   "validate CHAIN",
		Short: "Run every build check on a chain file; exit 1 on findings",
		Long: `Validate a chain file against the catalog as a build would: every build
check of the request pipeline (P6–P11, through the reference runtime's
validator), each entry's config block against its plugin's schema (unknown
keys with the nearest field, values outside an enum, wrong types, missing
required fields), the extension checks (D1, D3–D5, D17, D18) and the hook
checks (H3, H6). A file that names no plugin (an empty file, /dev/null) is a
finding too.

Where the plugin can run here (compiled into abctl, or a binary of a dir:
source, which is started and stopped again), its factory is also run with
each entry's config, so a config the plugin itself rejects (such as a
guardrail with no phrases) is reported as the build would report it.

Every finding is reported at once, each with file:line:column, rule ID,
plugin and fix. The exit code is 1 when there are findings, 3 when the file
cannot be read or decoded (the error gives file:line:column).`,
		Example:           "  abctl chain validate chain.yaml\n  abctl chain validate chain.yaml -o json",
		Args:              exactArgs(1),
		ValidArgsFunction: completeYAML,
		RunE: func(cmd *cobra.Command, args []string) error {
			v.chain = args[0]
			return runChainValidate(cmd.Context(), o, v)
		},
	}
}

func runChainValidate(ctx context.Context, o *globalOpts, v *chainValidateOpts) error {
	format, cat, cf, err := o.chainInputs(ctx, v.chain)
	if err != nil {
		return err
	}
	return reportFindings(o, format, validateBuild(ctx, o, cf, cat), v.chain)
}

// validateBuild validates cf against cat and runs the factory of every
// pipeline entry whose plugin can run here: a binary from a dir: source is
// started (and stopped before returning), anything else runs in-process
// when abctl has it compiled in. A binary that cannot be started leaves its
// entries checked against the schema only, with a note saying so.
func validateBuild(ctx context.Context, o *globalOpts, cf *catalog.ChainFile, cat *catalog.Catalog) []catalog.Finding {
	inproc := map[string]*gateway.Factory{}
	for _, f := range o.app.pipeline() {
		if _, dup := inproc[f.Name]; !dup {
			inproc[f.Name] = &f
		}
	}
	var host *pluginhost.Host
	defer func() {
		if host != nil {
			host.Close()
		}
	}()
	bins := map[string]*gateway.Factory{}
	tried := map[string]bool{}
	for _, dir := range []gateway.Direction{gateway.Inbound, gateway.Outbound} {
		for _, e := range cf.Direction(dir) {
			d, ok := cat.Lookup(e.Name)
			if !ok || d.Origin.Kind != catalog.OriginBinary || d.Capabilities == nil || tried[e.Name] || e.OnError == "off" {
				continue
			}
			tried[e.Name] = true
			if host == nil {
				host = pluginhost.NewHost(o.app.PluginHost)
			}
			p, err := host.LoadCommand(ctx, d.Origin.Command())
			if err == nil {
				if f, ok := p.Factory(); ok {
					bins[e.Name] = &f
					continue
				}
				err = errors.New("it serves no pipeline plugin")
			}
			fmt.Fprintf(o.app.Err, "%s %s: could not start %s to run its factory (%v); its config is checked against the schema only\n",
				newPainter(o.app, o.noColor).dim("note:"), e.Name, d.Origin.Path, err)
		}
	}
	return catalog.ValidateBuild(cf, cat, func(name string) (*gateway.Factory, bool) {
		if d, ok := cat.Lookup(name); ok && d.Origin.Kind == catalog.OriginBinary {
			f, ok := bins[name]
			return f, ok
		}
		f, ok := inproc[name]
		return f, ok
	})
}
