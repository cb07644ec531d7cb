package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/abkit/abkit/internal/catalog"
)

// chainTab is the Chain tab: the loaded chain per direction, resolved
// against the catalog, with validation findings under the entries they
// concern.
type chainTab struct {
	cf       *catalog.ChainFile
	res      catalog.Resolved
	findings []catalog.Finding
	lines    []chainLine
	cursor   int
	off      int
}

type lineKind int

const (
	lkPlain lineKind = iota
	lkHeader
	lkEntry
	lkFinding
	lkFix
)

type chainLine struct {
	kind   lineKind
	text   string
	plugin string
}

func (t *chainTab) set(cf *catalog.ChainFile, c *catalog.Catalog) {
	t.cf = cf
	if c == nil {
		c = &catalog.Catalog{}
	}
	t.res = catalog.Resolve(cf, c)
	t.findings = catalog.ValidateChain(cf, c)
	t.lines = t.build()
	t.cursor = clamp(t.cursor, len(t.lines))
}

// positions maps each plugin of the chain to its first active position.
func (t *chainTab) positions() map[string]int {
	out := map[string]int{}
	for _, ch := range t.res.Chains {
		for _, e := range ch.Entries {
			if _, ok := out[e.Name]; !ok && e.Position > 0 {
				out[e.Name] = e.Position
			}
		}
	}
	for _, x := range t.res.Extensions {
		out[x.Plugin] = 0
	}
	for _, h := range t.res.Hooks {
		out[h.Plugin] = 0
	}
	return out
}

func (t *chainTab) build() []chainLine {
	var out []chainLine
	used := make([]bool, len(t.findings))
	findingsAt := func(line int, plugin string) {
		for i, f := range t.findings {
			if !used[i] && f.Line == line && (plugin == "" || f.Plugin == "" || f.Plugin == plugin) {
				used[i] = true
				out = append(out, chainLine{kind: lkFinding, text: "      ✗ " + f.Rule + " " + f.Msg, plugin: plugin},
					chainLine{kind: lkFix, text: "        fix: " + f.Fix, plugin: plugin})
			}
		}
	}
	out = append(out, chainLine{kind: lkHeader, text: fmt.Sprintf("%s  mode %s  %s", t.cf.Path, t.res.Mode, plural(len(t.findings), "finding"))})
	for _, ch := range t.res.Chains {
		buf := "no"
		if ch.BuffersBodies {
			buf = "yes"
		}
		out = append(out, chainLine{}, chainLine{kind: lkHeader, text: fmt.Sprintf("%s  (bodies to plugins: %s)", ch.Direction, buf)})
		for _, e := range ch.Entries {
			pos := " off"
			if e.Position > 0 {
				pos = fmt.Sprintf("%4d", e.Position)
			}
			caps := "unknown plugin"
			if e.Known {
				caps = capsText(e.Capabilities, e.Behaviours)
			}
			var deps, anyOf []string
			anyOK := false
			for _, d := range e.Deps {
				if d.Kind == "requires_any" {
					anyOf = append(anyOf, d.Name)
					anyOK = anyOK || d.Status == catalog.DepSatisfied
					continue
				}
				deps = append(deps, d.Name+" "+depMark(d.Status))
			}
			if len(anyOf) > 0 {
				// requires_any is met by one satisfied name (P8).
				mark := "✗ none before"
				if anyOK {
					mark = "✓"
				}
				deps = append(deps, "any("+strings.Join(anyOf, "|")+") "+mark)
			}
			text := fmt.Sprintf("%s  %-18s %-8s %s", pos, e.Name, e.OnError, caps)
			if len(deps) > 0 {
				text += "  needs " + strings.Join(deps, ", ")
			}
			out = append(out, chainLine{kind: lkEntry, text: text, plugin: e.Name})
			findingsAt(e.Line, e.Name)
		}
	}
	if len(t.res.Extensions) > 0 {
		out = append(out, chainLine{}, chainLine{kind: lkHeader, text: "extensions (dispatch order)"})
		for _, x := range t.res.Extensions {
			out = append(out, chainLine{kind: lkEntry, plugin: x.Plugin, text: fmt.Sprintf("  %4d  %-18s required=%t slots=%s points=%s",
				x.Priority, x.Plugin, x.Required, orNone(strings.Join(x.Slots, ",")), orNone(strings.Join(x.Points, ",")))})
		}
	}
	if len(t.res.Hooks) > 0 {
		out = append(out, chainLine{}, chainLine{kind: lkHeader, text: "hooks (bus order)"})
		for _, h := range t.res.Hooks {
			out = append(out, chainLine{kind: lkEntry, plugin: h.Plugin, text: fmt.Sprintf("  %4d  %-18s %s %s %s", h.Order, h.Plugin, h.ID, h.Kind, h.Policy)})
		}
	}
	var rest []int
	for i := range t.findings {
		if !used[i] {
			rest = append(rest, i)
		}
	}
	if len(rest) > 0 {
		out = append(out, chainLine{}, chainLine{kind: lkHeader, text: "other findings"})
		for _, i := range rest {
			f := t.findings[i]
			out = append(out, chainLine{kind: lkFinding, plugin: f.Plugin, text: "  ✗ line " + strconv.Itoa(f.Line) + " " + f.Rule + " " + f.Plugin + ": " + f.Msg},
				chainLine{kind: lkFix, plugin: f.Plugin, text: "    fix: " + f.Fix})
		}
	}
	return out
}

// capsText is the long form of capabilities and behaviours.
func capsText(c *catalog.Capabilities, behaviours []string) string {
	var out []string
	if c != nil {
		if c.ReadsBody {
			out = append(out, "reads")
		}
		if c.WritesRequestBody {
			out = append(out, "writes-req")
		}
		if c.WritesResponseBody {
			out = append(out, "writes-resp")
		}
	}
	out = append(out, behaviours...)
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ",")
}

func (t *chainTab) selectedPlugin() string {
	if len(t.lines) == 0 {
		return ""
	}
	return t.lines[t.cursor].plugin
}

func (t *chainTab) move(msg tea.KeyPressMsg, k KeyMap, h int) {
	t.cursor = moveCursor(msg, k, t.cursor, len(t.lines), h)
}

func (t *chainTab) view(w, h int, th theme) []string {
	if t.cf == nil {
		return []string{"", "  no chain loaded"}
	}
	t.off = window(t.cursor, t.off, h, len(t.lines))
	out := make([]string, 0, h)
	for i := t.off; i < len(t.lines) && i < t.off+h; i++ {
		l := t.lines[i]
		mark := "  "
		if i == t.cursor {
			mark = "> "
		}
		s := fit(mark+l.text, w)
		switch {
		case i == t.cursor:
			s = th.sel.Render(s)
		case l.kind == lkHeader:
			s = th.title.Render(s)
		case l.kind == lkFinding:
			s = th.bad.Render(s)
		case l.kind == lkFix:
			s = th.dim.Render(s)
		}
		out = append(out, s)
	}
	return out
}

func depMark(status string) string {
	switch status {
	case catalog.DepMissing:
		return "✗ missing"
	case catalog.DepLate:
		return "✗ after"
	}
	return "✓"
}
