package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/spf13/cobra"
)

// showOutput is the JSON and YAML form of `catalog show`.
type showOutput struct {
	Plugin catalog.Descriptor `json:"plugin"`
	// Dependents are the plugins that require this one.
	Dependents []string `json:"dependents"`
	// Missing are dependencies the catalog does not provide.
	Missing []string `json:"missing,omitempty"`
}

// catalogShowOpts are what `abctl catalog show` runs with: the NAME
// argument.
type catalogShowOpts struct {
	name string
}

func newCatalogShowCmd(o *globalOpts) *cobra.Command {
	s := &catalogShowOpts{}
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show one plugin's full descriptor, its dependencies and its dependents",
		Long: `Show everything the catalog knows about one plugin: description, families,
capabilities, optional behaviours, configuration schema, extension manifest,
hooks, version and origin; which of its dependencies the catalog provides;
and which plugins depend on it.`,
		Example:           "  abctl catalog show tool-allowlist\n  abctl catalog show mcp-parser -o yaml",
		Args:              exactArgs(1),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			s.name = args[0]
			return runCatalogShow(cmd.Context(), o, s)
		},
	}
}

func runCatalogShow(ctx context.Context, o *globalOpts, s *catalogShowOpts) error {
	format, cat, err := o.formatAndCatalog(ctx)
	if err != nil {
		return err
	}
	d, ok := cat.Lookup(s.name)
	if !ok {
		hint := ""
		if near := catalog.DidYouMean(s.name, cat.Names()); near != "" {
			hint = " " + near
		}
		return usageErr(fmt.Errorf("no plugin %q in the catalog (%s);%s see 'abctl catalog list'", s.name, strings.Join(cat.Names(), ", "), hint))
	}
	out := showOutput{Plugin: *d, Dependents: nonNil(cat.Dependents(d.Name))}
	if d.Capabilities != nil {
		for _, r := range append(slices.Clone(d.Capabilities.Requires), d.Capabilities.RequiresAny...) {
			if _, ok := cat.Lookup(r); !ok {
				out.Missing = append(out.Missing, r)
			}
		}
	}
	if format != "table" {
		return writeOut(writeData(o.app.Out, format, out))
	}
	return writeOut(printShow(o, cat, out))
}

func printShow(o *globalOpts, cat *catalog.Catalog, s showOutput) error {
	d := s.Plugin
	p := outPainter(o.app, o.noColor)
	var rows [][]string
	add := func(k, v string) { rows = append(rows, []string{k, v}) }
	add("name", d.Name)
	add("description", d.Description)
	if d.Version != "" {
		add("version", d.Version)
	}
	add("families", strings.Join(d.Families, ","))
	if c := d.Capabilities; c != nil {
		add("reads_body", strconv.FormatBool(c.ReadsBody))
		add("writes_request_body", strconv.FormatBool(c.WritesRequestBody))
		add("writes_response_body", strconv.FormatBool(c.WritesResponseBody))
		add("requires", depList(cat, c.Requires, p))
		add("requires_any", depList(cat, c.RequiresAny, p))
		for _, l := range catalog.ExtensionLines(c.Extensions) {
			add("extension", l)
		}
	}
	if len(d.Behaviours) > 0 {
		add("behaviours", strings.Join(d.Behaviours, ","))
	}
	for _, x := range catalog.Details(&d, ",") {
		if !x.List {
			add(x.Key, x.Value)
		}
		for _, l := range x.Lines {
			add(x.Key, l)
		}
	}
	add("origin", d.Origin.String())
	if d.Origin.SHA256 != "" {
		add("sha256", d.Origin.SHA256)
	}
	add("dependents", strings.Join(s.Dependents, ","))
	if !o.app.OutTerminal {
		return writeTable(o.app.Out, false, 0, p, nil, rows)
	}
	for i := range rows {
		rows[i][0] += ":"
	}
	return writeTable(o.app.Out, true, o.app.tableWidth(), p, []string{"FIELD", "VALUE"}, rows)
}

// depList marks each dependency the catalog lacks.
func depList(cat *catalog.Catalog, names []string, p painter) string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if _, ok := cat.Lookup(n); !ok {
			n += " " + p.red("(missing)")
		}
		out = append(out, n)
	}
	return strings.Join(out, ",")
}
