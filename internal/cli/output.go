package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/charmbracelet/x/ansi"
	"io"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/abkit/abkit/internal/termsafe"
)

// painter adds ANSI colour when it is wanted: a terminal, no NO_COLOR, no
// --no-color.
type painter struct{ on bool }

// newPainter returns the painter for Out (forOut) or Err.
func newPainter(app *App, noColor bool) painter {
	tty := app.ErrTerminal
	return painter{on: tty && !noColor && app.getenv("NO_COLOR") == ""}
}

func outPainter(app *App, noColor bool) painter {
	return painter{on: app.OutTerminal && !noColor && app.getenv("NO_COLOR") == ""}
}

func (p painter) wrap(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p painter) bold(s string) string   { return p.wrap("1", s) }
func (p painter) red(s string) string    { return p.wrap("31", s) }
func (p painter) green(s string) string  { return p.wrap("32", s) }
func (p painter) yellow(s string) string { return p.wrap("33", s) }
func (p painter) dim(s string) string    { return p.wrap("2", s) }

// cellSpaces turns the characters that would break a table row into
// spaces. Made once: a dry-run writes a row per event.
var cellSpaces = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

// writeTable prints rows. On a terminal it aligns columns under a header;
// otherwise it prints one tab-separated line per row and no header, for
// cut, awk and grep. Cells never contain tabs or newlines.
func writeTable(w io.Writer, terminal bool, p painter, header []string, rows [][]string) error {
	// Cells come from catalogs, chains and traffic: control characters
	// are escaped so that none reaches the terminal.
	clean := func(s string) string {
		return termsafe.String(cellSpaces.Replace(s))
	}
	if !terminal {
		var b bytes.Buffer
		for _, r := range rows {
			for i, c := range r {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(clean(c))
			}
			b.WriteByte('\n')
		}
		_, err := w.Write(b.Bytes())
		return err
	}
	// Columns are measured in terminal cells with escape codes left out
	// (ansi.StringWidth), so a coloured cell such as a red "reject" keeps
	// the columns aligned; tabwriter would count its escape bytes.
	table := make([][]string, 0, len(rows)+1)
	if len(header) > 0 {
		table = append(table, header)
	}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = clean(c)
			if cells[i] == "" {
				cells[i] = "-"
			}
		}
		table = append(table, cells)
	}
	var widths []int
	for _, r := range table {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	var b strings.Builder
	for n, r := range table {
		var line strings.Builder
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			line.WriteString(c)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(c)))
			}
		}
		l := line.String()
		if n == 0 && len(header) > 0 {
			l = p.bold(l)
		}
		b.WriteString(l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJSON prints v as indented JSON. Field order follows the Go structs,
// so the output is stable.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeYAML prints v as YAML with the same field names and order as its
// JSON form.
func writeYAML(w io.Writer, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return fmt.Errorf("convert to YAML: %w", err)
	}
	_, err = w.Write(y)
	return err
}

// writeData prints v as JSON or YAML.
func writeData(w io.Writer, format string, v any) error {
	if format == "yaml" {
		return writeYAML(w, v)
	}
	return writeJSON(w, v)
}
