package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/spf13/cobra"
)

// listOutput is the JSON and YAML form of `catalog list`; a file: source
// reads it back.
type listOutput struct {
	Plugins []catalog.Descriptor `json:"plugins"`
}

// catalogListOpts are what `abctl catalog list` runs with; it has no flags
// of its own (--source and -o are global).
type catalogListOpts struct{}

func newCatalogListCmd(o *globalOpts) *cobra.Command {
	l := &catalogListOpts{}
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
			return runCatalogList(cmd.Context(), o, l)
		},
	}
}

func runCatalogList(ctx context.Context, o *globalOpts, _ *catalogListOpts) error {
	format, cat, err := o.formatAndCatalog(ctx)
	if err != nil {
		return err
	}
	return writeOut(printList(o, format, cat))
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

// capsCell is the compact form of capabilities: reads, writes-req,
// writes-resp, comma-separated; "none" for a pipeline plugin without any.
func capsCell(c *catalog.Capabilities) string {
	if c == nil {
		return ""
	}
	out := c.BodyWords()
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
