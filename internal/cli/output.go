package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/goccy/go-yaml"

	"github.com/abkit/abkit/internal/catalog"
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

// writeTable prints rows. On a terminal it aligns columns under a header
// and, when width is positive, fits the table to width cells by wrapping
// the widest columns (a long DETAIL or DESCRIPTION continues on the lines
// below, under its own column; nothing is cut); otherwise it prints one
// tab-separated line per row, whole, and no header, for cut, awk and grep.
// Cells never contain tabs or newlines.
func writeTable(w io.Writer, terminal bool, width int, p painter, header []string, rows [][]string) error {
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
	// least is the narrowest each column may be with its identifiers (a
	// hook, a plugin name) whole; leastSplit with them split at their
	// hyphens and underscores, for a terminal too narrow for the former.
	var natural, least, leastSplit []int
	for n, r := range table {
		for i, c := range r {
			if i >= len(natural) {
				natural, least, leastSplit = append(natural, 0), append(least, 0), append(leastSplit, 0)
			}
			natural[i] = max(natural[i], ansi.StringWidth(c))
			if n == 0 && len(header) > 0 {
				least[i] = max(least[i], ansi.StringWidth(c))
				leastSplit[i] = least[i]
				continue
			}
			for _, word := range strings.FieldsFunc(c, func(r rune) bool { return strings.ContainsRune(wrapAt, r) }) {
				least[i] = max(least[i], min(ansi.StringWidth(word), maxUnsplit))
			}
			for _, word := range strings.FieldsFunc(c, func(r rune) bool { return strings.ContainsRune(wrapAt+splitAt, r) }) {
				leastSplit[i] = max(leastSplit[i], min(ansi.StringWidth(word), maxUnsplit))
			}
		}
	}
	// Two-cell gaps and whole identifiers where they fit; else one-cell
	// gaps; else identifiers split too. Past that the terminal wraps.
	gap, breaks := "  ", wrapAt[1:]
	widths, ok := fitWidths(natural, least, width, len(gap))
	if !ok {
		gap = " "
		if widths, ok = fitWidths(natural, least, width, len(gap)); !ok {
			widths, _ = fitWidths(natural, leastSplit, width, len(gap))
			breaks += splitAt
		}
	}
	var b strings.Builder
	for n, r := range table {
		// Each cell wrapped to its column; the row takes as many lines as
		// its tallest cell.
		parts := make([][]string, len(r))
		height := 1
		for i, c := range r {
			parts[i] = []string{c}
			if ansi.StringWidth(c) > widths[i] {
				// Wordwrap breaks only at spaces and breaks (ansi.Wrap split
				// "response_frame" mid-word); Hardwrap cuts what is still too long.
				parts[i] = strings.Split(ansi.Hardwrap(ansi.Wordwrap(c, widths[i], breaks), widths[i], true), "\n")
			}
			height = max(height, len(parts[i]))
		}
		for k := range height {
			var line strings.Builder
			for i := range r {
				c := ""
				if k < len(parts[i]) {
					c = strings.TrimRight(parts[i][k], " ")
				}
				if i > 0 {
					line.WriteString(gap)
				}
				line.WriteString(c)
				if i < len(r)-1 {
					line.WriteString(strings.Repeat(" ", max(widths[i]-ansi.StringWidth(c), 0)))
				}
			}
			l := strings.TrimRight(line.String(), " ")
			if n == 0 && len(header) > 0 {
				l = p.bold(l)
			}
			b.WriteString(l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// minColumn is the narrowest a column is wrapped to (unless its header or
// its widest cell is narrower); no column is narrower than its longest
// word, up to maxUnsplit cells.
const (
	minColumn  = 8
	maxUnsplit = 24
	// wrapAt are the characters a cell is wrapped after (a space, and
	// the separators of lists such as "a,b"); a hyphen is one too.
	wrapAt = " ,;/|"
	// splitAt are where an identifier is split when nothing else fits.
	splitAt = "_-."
)

// fitWidths returns column widths that fit width cells with gaps of gap
// cells: the widest columns are capped at the largest width that fits,
// the narrow ones keep their natural width, and no column goes below its
// header and longest word (least) or minColumn. ok is false when even
// that does not fit (the table is then wider than width). width <= 0
// keeps natural.
func fitWidths(natural, least []int, width, gap int) (widths []int, ok bool) {
	n := len(natural)
	avail := width - gap*max(n-1, 0)
	floor := make([]int, n)
	for i := range natural {
		floor[i] = min(natural[i], max(least[i], minColumn))
	}
	capped := func(c int) (int, []int) {
		total, out := 0, make([]int, n)
		for i := range natural {
			out[i] = max(min(natural[i], c), floor[i])
			total += out[i]
		}
		return total, out
	}
	if total, _ := capped(1 << 30); width <= 0 || total <= avail {
		return natural, true
	}
	if total, out := capped(0); total > avail {
		return out, false
	}
	// The largest cap that fits: the widths grow with the cap.
	lo, hi := 0, slices.Max(natural)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if total, _ := capped(mid); total <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	total, out := capped(lo)
	// Cells the cap left over go to the capped columns, left to right.
	for i := range out {
		if total >= avail {
			break
		}
		if out[i] < natural[i] {
			add := min(natural[i]-out[i], avail-total)
			out[i] += add
			total += add
		}
	}
	return out, true
}

// writeJSON prints v as indented JSON. Field order follows the Go structs,
// so the output is stable.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	// Names and descriptions from url:, file: and dir: sources: no C1
	// control or bidi override reaches a terminal raw.
	_, err := w.Write(termsafe.JSON(b.Bytes()))
	return err
}

// writeYAML prints v as YAML with the same field names and order as its
// JSON form.
func writeYAML(w io.Writer, v any) error {
	y, j, safe, err := yamlOf(v)
	if err != nil {
		return err
	}
	if !safe {
		// The YAML library writes control characters (ESC, from a url:
		// or file: catalog) raw in plain scalars, where they would act
		// on the terminal. JSON is YAML too, with every one of them
		// escaped and the data unchanged.
		var b bytes.Buffer
		if err := json.Indent(&b, j, "", "  "); err != nil {
			return err
		}
		b.WriteByte('\n')
		y = append([]byte("# as JSON (also YAML): the data holds control characters, escaped here\n"), termsafe.JSON(b.Bytes())...)
	}
	_, err = w.Write(y)
	return err
}

// yamlOf returns v as YAML, with the same field names and order as its
// JSON form, and that JSON form; safe is false when the YAML holds control
// characters, which the YAML library writes raw: the caller prints the
// JSON, escaped, instead.
func yamlOf(v any) (doc, j []byte, safe bool, err error) {
	j, err = json.Marshal(v)
	if err != nil {
		return nil, nil, false, err
	}
	doc, err = yaml.JSONToYAML(j)
	if err != nil {
		return nil, nil, false, fmt.Errorf("convert to YAML: %w", err)
	}
	return doc, j, termsafe.Safe(string(doc)), nil
}

// writeData prints v as JSON or YAML.
func writeData(w io.Writer, format string, v any) error {
	if format == "yaml" {
		return writeYAML(w, v)
	}
	return writeJSON(w, v)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
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
