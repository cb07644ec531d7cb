package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/sdk/gateway"
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

func newChainValidateCmd(o *globalOpts) *cobra.Command {
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
			format, cat, cf, err := o.chainInputs(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return reportFindings(o, format, validateBuild(cmd.Context(), o, cf, cat), args[0])
		},
	}
}

func newChainShowCmd(o *globalOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "show CHAIN",
		Short: "Show the resolved chain per direction with capabilities and dependencies",
		Long: `Show a chain file resolved against the catalog: per direction, each active
entry in order with its error policy, capabilities and whether each of its
dependencies is satisfied, missing or late, and whether the host will
buffer bodies (P11); then the extensions in dispatch order (D4) and the
hooks in bus order (H1). An entry naming a plugin the catalog lacks (for
its family) is shown with capabilities unknown and warned about on stderr,
with the nearest name, and the exit code is 1; otherwise it does not judge
the chain: use 'chain validate' for every finding.`,
		Example:           "  abctl chain show chain.yaml\n  abctl chain show chain.yaml -o yaml",
		Args:              exactArgs(1),
		ValidArgsFunction: completeYAML,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, cat, cf, err := o.chainInputs(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r := catalog.Resolve(cf, cat)
			if format != "table" {
				err = writeData(o.app.Out, format, r)
			} else {
				err = printResolved(o, r)
			}
			if err != nil {
				return writeOut(err)
			}
			// The data is printed first: the warnings explain its
			// "unknown" cells rather than replace them.
			if warnUnknown(o, cf, cat) > 0 {
				return &ExitError{Code: ExitFindings}
			}
			return nil
		},
	}
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
			p, err := host.Load(ctx, d.Origin.Path)
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

// warnUnknown prints a warning on stderr for each chain, extension and hook
// entry of cf that names no plugin of cat implementing its family, with the
// nearest such name when one is close, and returns how many it printed.
func warnUnknown(o *globalOpts, cf *catalog.ChainFile, cat *catalog.Catalog) int {
	var pipe, ext, hook []string
	for _, d := range cat.Plugins {
		if d.Capabilities != nil {
			pipe = append(pipe, d.Name)
		}
		if d.Extension != nil {
			ext = append(ext, d.Name)
		}
		if len(d.Hooks) > 0 {
			hook = append(hook, d.Name)
		}
	}
	p := newPainter(o.app, o.noColor)
	n := 0
	warn := func(path, entry, name, what string, names []string) {
		at := cf.Path
		if l := cf.Line(path); l > 0 {
			at += ":" + strconv.Itoa(l)
		}
		near := catalog.DidYouMean(name, names)
		if near != "" {
			near += " "
		}
		fmt.Fprintf(o.app.Err, "%s %s: %s %q is not %s in the catalog; %srun `abctl chain validate` for every finding\n",
			p.yellow("warning:"), at, entry, termsafe.Line(name), what, termsafe.Line(near))
		n++
	}
	for _, dir := range []gateway.Direction{gateway.Inbound, gateway.Outbound} {
		for i, e := range cf.Direction(dir) {
			if d, ok := cat.Lookup(e.Name); !ok || d.Capabilities == nil {
				warn(fmt.Sprintf("$.%s[%d]", dir, i), dir.String()+" entry", e.Name, "a pipeline plugin", pipe)
			}
		}
	}
	for i, e := range cf.Extensions {
		if d, ok := cat.Lookup(e.Plugin); !ok || d.Extension == nil {
			warn(fmt.Sprintf("$.extensions[%d].plugin", i), "extension", e.Plugin, "an extension plugin", ext)
		}
	}
	for i, h := range cf.Hooks {
		if d, ok := cat.Lookup(h.Plugin); !ok || len(d.Hooks) == 0 {
			warn(fmt.Sprintf("$.hooks[%d].plugin", i), "hook", h.Plugin, "a hook plugin", hook)
		}
	}
	return n
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

func printResolved(o *globalOpts, r catalog.Resolved) error {
	p := outPainter(o.app, o.noColor)
	var rows [][]string
	for _, ch := range r.Chains {
		for _, e := range ch.Entries {
			// The entry's number in the file, as errors count it
			// ("entry 3"); on_error says whether it runs.
			pos := strconv.Itoa(e.Entry)
			caps, deps := "unknown", ""
			if e.Known {
				caps = capsCell(e.Capabilities)
				var ds []string
				for _, d := range e.Deps {
					name := d.Name
					if d.Kind == "requires_any" {
						name = "any:" + name
					}
					ds = append(ds, name+"="+d.Status)
				}
				deps = strings.Join(ds, ",")
			}
			buf := "no"
			if ch.BuffersBodies {
				buf = "yes"
			}
			rows = append(rows, []string{ch.Direction, pos, e.Name, e.OnError, caps, deps, buf})
		}
	}
	if len(rows) > 0 {
		if err := writeTable(o.app.Out, o.app.OutTerminal, o.app.tableWidth(), p, []string{"DIRECTION", "ENTRY", "PLUGIN", "ON_ERROR", "CAPABILITIES", "DEPENDENCIES", "BODIES"}, rows); err != nil {
			return err
		}
	}
	if len(r.Extensions) > 0 {
		if len(rows) > 0 && o.app.OutTerminal {
			fmt.Fprintln(o.app.Out)
		}
		var xr [][]string
		for _, x := range r.Extensions {
			xr = append(xr, []string{"extension", x.Plugin, strconv.Itoa(x.Priority), strconv.FormatBool(x.Required), strings.Join(x.Slots, ","), strings.Join(x.Points, ",")})
		}
		if err := writeTable(o.app.Out, o.app.OutTerminal, o.app.tableWidth(), p, []string{"KIND", "PLUGIN", "PRIORITY", "REQUIRED", "SLOTS", "POINTS"}, xr); err != nil {
			return err
		}
	}
	if len(r.Hooks) > 0 {
		if (len(rows) > 0 || len(r.Extensions) > 0) && o.app.OutTerminal {
			fmt.Fprintln(o.app.Out)
		}
		var hr [][]string
		for _, h := range r.Hooks {
			hr = append(hr, []string{"hook", h.Plugin, h.ID, h.Kind, strconv.Itoa(h.Order), h.Policy})
		}
		if err := writeTable(o.app.Out, o.app.OutTerminal, o.app.tableWidth(), p, []string{"KIND", "PLUGIN", "ID", "HOOK", "ORDER", "POLICY"}, hr); err != nil {
			return err
		}
	}
	return nil
}
