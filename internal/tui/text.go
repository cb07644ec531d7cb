package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// fit truncates s to w cells (with an ellipsis) and pads it with spaces to
// exactly w cells, so every rendered line has the width of the screen.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = ansi.StringWidth(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// wrap breaks s into lines of at most w cells, indenting continuation lines
// by indent spaces. The first indent cells of s (a label) stay on the
// first line and the rest is wrapped once at w-indent, so a line broken
// after a hyphen is not joined back with a space.
func wrap(s string, w, indent int) []string {
	if w <= indent+4 {
		return []string{s}
	}
	if ansi.StringWidth(s) <= w {
		return []string{s}
	}
	if indent == 0 {
		return wrapWords(s, w)
	}
	i := cutAt(s, indent)
	head, body := s[:i], s[i:]
	out := wrapWords(body, w-indent)
	pad := strings.Repeat(" ", indent)
	for i := range out {
		if i == 0 {
			out[i] = head + out[i]
		} else {
			out[i] = pad + out[i]
		}
	}
	return out
}

// wrapWords wraps s at w cells on spaces, bars and slashes, not
// on hyphens: plugin names like inference-parser stay whole (ansi.Wrap
// always breaks after a hyphen, so hyphens become non-breaking ones while
// it wraps).
func wrapWords(s string, w int) []string {
	const nbh = "\u2011"
	s = strings.ReplaceAll(s, "-", nbh)
	out := strings.Split(ansi.Wrap(s, w, " |/"), "\n")
	for i := range out {
		out[i] = strings.ReplaceAll(out[i], nbh, "-")
	}
	return out
}

// cutAt returns the byte offset in s after its first n cells, escape
// sequences included up to there.
func cutAt(s string, n int) int {
	var state byte
	i, cells := 0, 0
	for i < len(s) && cells < n {
		_, w, adv, st := ansi.DecodeSequence(s[i:], state, nil)
		state = st
		i += adv
		cells += w
	}
	return i
}

// window returns the first row to show so that cursor is visible in a
// viewport of h rows that showed from off before.
func window(cursor, off, h, n int) int {
	if h <= 0 {
		return 0
	}
	if cursor < off {
		off = cursor
	}
	if cursor >= off+h {
		off = cursor - h + 1
	}
	if off > n-h {
		off = n - h
	}
	return max(off, 0)
}

// clamp bounds i to [0, n-1], or 0 when n is 0.
func clamp(i, n int) int {
	if i >= n {
		i = n - 1
	}
	return max(i, 0)
}

// sideBySide joins two blocks of lines column-wise: left lines are lw
// cells, right lines rw cells, with a separator between.
func sideBySide(left, right []string, lw, rw int, sep string) []string {
	n := max(len(left), len(right))
	out := make([]string, n)
	for i := range n {
		var l, r string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = fit(l, lw) + sep + fit(r, rw)
	}
	return out
}

// pad extends lines with empty lines to n.
func pad(lines []string, n int) []string {
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}

// catalogSplit is the wide layout of the Catalog tab: the list's and the
// detail pane's widths at w columns. The detail pane gets a bounded share
// (it wraps well) so that names and descriptions stay readable.
func catalogSplit(w int) (lw, rw int) {
	rw = min(max(w*40/100, 40), 72)
	return w - rw - 3, rw
}

// traceSplit is the wide layout of the Trace tab: the timeline needs about
// 54 columns for all of its fields; the event pane (raw bytes, diffs) gets
// the rest.
func traceSplit(w int) (lw, rw int) {
	lw = min(max(w*30/100, 54), 60)
	return lw, w - lw - 3
}
