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
	if err := writeTable(&b, true, p, []string{"SEQ", "ACTION", "DETAIL"}, rows); err != nil {
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
