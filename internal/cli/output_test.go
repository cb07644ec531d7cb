package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestTableAlignsColouredCells: a coloured cell (a red "reject") does not
// shift the columns after it on a terminal.
func TestTableAlignsColouredCells(t *testing.T) {
	p := painter{on: true}
	var b bytes.Buffer
	rows := [][]string{{"1", p.red("reject"), "x"}, {"2", "continue", "y"}}
	if err := writeTable(&b, true, 0, p, []string{"SEQ", "ACTION", "DETAIL"}, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %q", b.String())
	}
	col := -1
	for _, l := range lines {
		plain := ansi.Strip(l)
		i := strings.LastIndex(plain, "  ") + 2
		if col >= 0 && i != col {
			t.Errorf("last column starts at %d, not %d, in:\n%s", i, col, ansi.Strip(b.String()))
		}
		col = i
	}
}

// TestTableFitsWidth: on a terminal of 60 cells a table with a long
// DETAIL wraps that column under itself, keeps every other column whole
// and aligned (a coloured cell too), and loses no word; off a terminal
// the same rows are printed whole, one line each, whatever the width.
func TestTableFitsWidth(t *testing.T) {
	p := painter{on: true}
	detail := "451 blocked by guardrail rule phrases[0] (\"drop table\") in the response, and more words after it"
	rows := [][]string{
		{"6", "on_response_frame", p.red("reject"), detail},
		{"7", "on_finish", "continue", "-"},
	}
	header := []string{"SEQ", "HOOK", "ACTION", "DETAIL"}
	var b bytes.Buffer
	if err := writeTable(&b, true, 60, p, header, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(ansi.Strip(b.String()), "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("DETAIL was not wrapped:\n%s", ansi.Strip(b.String()))
	}
	col := strings.Index(lines[0], "DETAIL")
	var got []string
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 60 {
			t.Errorf("line of %d cells: %q", w, l)
		}
		if len(l) > col {
			if strings.TrimSpace(l[:col]) != "" && !strings.HasPrefix(l, "SEQ") && l[col-2:col] != "  " {
				t.Errorf("DETAIL does not start at column %d in %q", col, l)
			}
			got = append(got, strings.Fields(l[col:])...)
		}
	}
	if strings.Contains(lines[1], "on_response_fr ") || !strings.Contains(lines[1], "on_response_frame") {
		t.Errorf("HOOK was split: %q", lines[1])
	}
	if want := append([]string{"DETAIL"}, strings.Fields(detail)...); strings.Join(got[:len(want)], " ") != strings.Join(want, " ") {
		t.Errorf("wrapped DETAIL reads %q, want %q", got, want)
	}
	b.Reset()
	if err := writeTable(&b, false, 20, p, header, rows); err != nil {
		t.Fatal(err)
	}
	if plain := strings.Split(b.String(), "\n"); !strings.HasSuffix(plain[0], "\t"+detail) {
		t.Errorf("plain output is not the whole row: %q", plain[0])
	}
}

// TestTableNarrowTerminal: a dry-run's seven columns fit 70 cells with
// one-cell gaps and their identifiers whole, and 56 cells with the hook
// and plugin names split at their underscores and hyphens; no word of any
// cell is lost in either.
func TestTableNarrowTerminal(t *testing.T) {
	p := painter{}
	header := []string{"SEQ", "HOOK", "PLUGIN", "FRAME", "ACTION", "DETAIL", "µS"}
	rows := [][]string{
		{"1", "on_request", "inference-parser", "-", "continue", "-", "72"},
		{"4", "on_response_frame", "guardrail", "0 last", "reject", "451 blocked by guardrail rule phrases[0]", "10"},
	}
	for _, tc := range []struct {
		width int
		whole bool // identifiers kept whole
	}{{70, true}, {56, false}} {
		var b bytes.Buffer
		if err := writeTable(&b, true, tc.width, p, header, rows); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if w := ansi.StringWidth(l); w > tc.width {
				t.Errorf("width %d: line of %d cells: %q", tc.width, w, l)
			}
		}
		if got := strings.Contains(out, "on_response_frame") && strings.Contains(out, "inference-parser"); got != tc.whole {
			t.Errorf("width %d: identifiers whole = %t, want %t:\n%s", tc.width, got, tc.whole, out)
		}
		for _, r := range rows {
			for _, c := range r {
				for _, w := range strings.FieldsFunc(c, func(r rune) bool { return strings.ContainsRune(" _-", r) }) {
					if !strings.Contains(out, w) {
						t.Errorf("width %d: %q of cell %q lost:\n%s", tc.width, w, c, out)
					}
				}
			}
		}
	}
}
