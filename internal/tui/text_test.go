package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		name, in  string
		w, indent int
		want      []string
	}{
		{"fits", "label  value", 20, 7, []string{"label  value"}},
		{"words", "label  one two three four five six", 16, 7,
			[]string{"label  one two", "       three", "       four five", "       six"}},
		{"names whole", "requires any mcp-parser ✗ not in chain, a2a-parser ✗ not in chain", 38, 13,
			[]string{"requires any mcp-parser ✗ not in", "             chain, a2a-parser ✗ not", "             in chain"}},
		// Names stay whole: no break after a hyphen (the old wrap broke
		// there and then joined the rest back with a space, "inference-
		// parser" became "inference- parser").
		{"hyphens", "requires any mcp-parser ✗ not in chain, a2a-parser ✗ not in chain, inference-parser ✓ in chain", 41, 13,
			[]string{"requires any mcp-parser ✗ not in chain,", "             a2a-parser ✗ not in chain,", "             inference-parser ✓ in chain"}},
		{"styled label", "\x1b[1mreason\x1b[m   blocked by guardrail rule phrases[0]", 30, 9,
			[]string{"reason   blocked by guardrail", "         rule phrases[0]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wrap(tc.in, tc.w, tc.indent)
			for i, l := range got {
				if ansi.StringWidth(l) > tc.w {
					t.Errorf("line %q wider than %d", l, tc.w)
				}
				got[i] = strings.TrimRight(ansi.Strip(l), " ")
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("wrap(%q, %d, %d) =\n%s\nwant\n%s", tc.in, tc.w, tc.indent, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
