package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/abkit/abkit/internal/catalog"
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

// listOutput is the JSON and YAML form of `catalog list`; a file: source
// reads it back.
type listOutput struct {
	Plugins []catalog.Descriptor `json:"plugins"`
}

func newCatalogListCmd(o *globalOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the plugins of the catalog sources",
		Long: `List every plugin the catalog sources provide, sorted by name, with its
contract families, capabilities, dependencies, origin and description.

On a terminal the output is an aligned table; otherwise it is one
tab-separated line per plugin with the columns NAME, FAMILIES, CAPABILITIES,
REQUIRES, ORIGIN, DESCRIPTION. -o json and -o yaml print {"plugins": [...]}
with the fields documented in docs/catalog.md.`,
		Example: "  abctl catalog list\n  abctl catalog list -o json\n  abctl catalog list --source dir:./bin --source url:http://gateway:9901/plugins",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, cat, err := o.formatAndCatalog(cmd.Context())
			if err != nil {
				return err
			}
			return writeOut(printList(o, format, cat))
		},
	}
}

func printList(o *globalOpts, format string, cat *catalog.Catalog) error {
	w := o.app.Out
	if format != "table" {
		return writeData(w, format, listOutput{Plugins: nonNil(cat.Plugins)})
	}
	rows := make([][]string, 0, len(cat.Plugins))
	for _, d := range cat.Plugins {
		rows = append(rows, []string{d.Name, strings.Join(d.Families, ","), capsCell(d.Capabilities), depsCell(d.Capabilities), d.Origin.String(), d.Description})
	}
	return writeTable(w, o.app.OutTerminal, o.app.tableWidth(), outPainter(o.app, o.noColor),
		[]string{"NAME", "FAMILIES", "CAPABILITIES", "REQUIRES", "ORIGIN", "DESCRIPTION"}, rows)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// capsCell is the compact form of capabilities: reads, writes-req,
// writes-resp, comma-separated; "none" for a pipeline plugin without any.
func capsCell(c *catalog.Capabilities) string {
	if c == nil {
		return ""
	}
	var out []string
	if c.ReadsBody {
		out = append(out, "reads")
	}
	if c.WritesRequestBody {
		out = append(out, "writes-req")
	}
	if c.WritesResponseBody {
		out = append(out, "writes-resp")
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}

// depsCell is "a,b" for requires and "any(c|d)" for requires_any.
func depsCell(c *catalog.Capabilities) string {
	if c == nil {
		return ""
	}
	out := slices.Clone(c.Requires)
	if len(c.RequiresAny) > 0 {
		out = append(out, "any("+strings.Join(c.RequiresAny, "|")+")")
	}
	return strings.Join(out, ",")
}

// showOutput is the JSON and YAML form of `catalog show`.
type showOutput struct {
	Plugin catalog.Descriptor `json:"plugin"`
	// Dependents are the plugins that require this one.
	Dependents []string `json:"dependents"`
	// Missing are dependencies the catalog does not provide.
	Missing []string `json:"missing,omitempty"`
}

func newCatalogShowCmd(o *globalOpts) *cobra.Command {
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
			format, cat, err := o.formatAndCatalog(cmd.Context())
			if err != nil {
				return err
			}
			d, ok := cat.Lookup(args[0])
			if !ok {
				hint := ""
				if near := catalog.DidYouMean(args[0], cat.Names()); near != "" {
					hint = " " + near
				}
				return usageErr(fmt.Errorf("no plugin %q in the catalog (%s);%s see 'abctl catalog list'", args[0], strings.Join(cat.Names(), ", "), hint))
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
		},
	}
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
	if d.Config != nil {
		for _, f := range catalog.ConfigLines(d.Config.Fields) {
			add("config", f)
		}
	} else if d.HasFamily(catalog.FamilyPipeline) {
		add("config", "none (takes no configuration)")
	}
	if e := d.Extension; e != nil {
		add("points", strings.Join(e.Points, ","))
		add("slots", strings.Join(e.Slots, ","))
		add("priority", strconv.Itoa(e.Priority))
		add("required", strconv.FormatBool(e.Required))
		if e.Timeout != "" {
			add("timeout", e.Timeout)
		}
	}
	for _, h := range d.Hooks {
		add("hook", fmt.Sprintf("%s kind=%s order=%d policy=%s", h.ID, h.Kind, h.Order, orDefault(string(h.Policy), "unspecified")))
	}
	for _, l := range d.Live {
		add("live", fmt.Sprintf("%s #%d", l.Direction, l.Position))
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

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
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

// lintOutput is the JSON and YAML form of `catalog lint`.
type lintOutput struct {
	Findings []catalog.Finding `json:"findings"`
}

func newCatalogLintCmd(o *globalOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "lint",
		Short: "Check the catalog against the contract rules; exit 1 on findings",
		Long: `Check every plugin of the catalog sources against the rules that need no
traffic: unique names (P1), capabilities static across two instances (P2),
descriptions (P5), requires and requires_any naming plugins in the catalog
(P7, P8), extension points, budgets, priorities and slot names (D1, D3, D4,
D17), hook specs (H1, H3), configuration schemas (C1) and the JSON Schemas
of declared extensions (X1).

Each finding names the plugin, the rule ID and the fix. The exit code is 1
when there are findings.`,
		Example: "  abctl catalog lint\n  abctl catalog lint --source file:catalog.yaml -o json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, cat, err := o.formatAndCatalog(cmd.Context())
			if err != nil {
				return err
			}
			fs := catalog.Lint(cat)
			return reportFindings(o, format, fs, fmt.Sprintf("%d plugin(s)", len(cat.Plugins)))
		},
	}
}

// reportFindings prints findings and returns the findings exit code when
// there are any.
func reportFindings(o *globalOpts, format string, fs []catalog.Finding, what string) error {
	if format != "table" {
		if err := writeData(o.app.Out, format, lintOutput{Findings: nonNil(fs)}); err != nil {
			return writeOut(err)
		}
	} else if o.app.OutTerminal {
		// On a terminal, one block per finding: messages are too long
		// for table columns.
		p := outPainter(o.app, o.noColor)
		var b strings.Builder
		for _, f := range fs {
			if w := f.Where(); w != "" {
				b.WriteString(w + ": ")
			}
			b.WriteString(p.red(f.Rule))
			if f.Plugin != "" {
				b.WriteString(" " + p.bold(f.Plugin))
			}
			b.WriteString(": " + f.Msg + "\n")
			b.WriteString("    " + p.dim("fix:") + " " + f.Fix + "\n")
		}
		if _, err := io.WriteString(o.app.Out, b.String()); err != nil {
			return writeOut(err)
		}
	} else {
		// Plain: FILE:LINE:COLUMN (when a file), RULE, PLUGIN, MESSAGE, FIX.
		rows := make([][]string, 0, len(fs))
		for _, f := range fs {
			var row []string
			if w := f.Where(); w != "" {
				row = append(row, w)
			}
			rows = append(rows, append(row, f.Rule, f.Plugin, f.Msg, f.Fix))
		}
		if err := writeTable(o.app.Out, false, 0, painter{}, nil, rows); err != nil {
			return writeOut(err)
		}
	}
	ep := newPainter(o.app, o.noColor)
	if len(fs) == 0 {
		fmt.Fprintf(o.app.Err, "%s %s, no findings\n", ep.green("ok:"), what)
		return nil
	}
	fmt.Fprintf(o.app.Err, "%s %s, %d finding(s)\n", ep.yellow("findings:"), what, len(fs))
	return &ExitError{Code: ExitFindings}
}

// writeOut marks a failure to write output; it is not a usage error.
func writeOut(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: ExitRead, Err: fmt.Errorf("write output: %w", err)}
}
