package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/spf13/cobra"
)

// chainShowOpts are what `abctl chain show` runs with: the CHAIN argument.
type chainShowOpts struct {
	chain string
}

func newChainShowCmd(o *globalOpts) *cobra.Command {
	s := &chainShowOpts{}
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
			s.chain = args[0]
			return runChainShow(cmd.Context(), o, s)
		},
	}
}

func runChainShow(ctx context.Context, o *globalOpts, s *chainShowOpts) error {
	format, cat, cf, err := o.chainInputs(ctx, s.chain)
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
	// The data is printed first: the warnings explain its "unknown" cells
	// rather than replace them.
	if warnUnknown(o, cf, cat) > 0 {
		return &ExitError{Code: ExitFindings}
	}
	return nil
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
