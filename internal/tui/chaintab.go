package tui

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/sdk/gateway"
)

// chainTab is the Chain tab: the loaded chain per direction, resolved
// against the catalog, with validation findings under the entries they
// concern. The cursor moves by item: an entry together with its findings,
// or a finding that concerns no entry. Lines wrap to the width with a
// hanging indent, so no finding is cut.
type chainTab struct {
	paneSize
	// loadErr is why the chain file could not be loaded (such as a YAML
	// error with file:line:column); the tab shows it until e fixes it.
	loadErr  string
	cf       *catalog.ChainFile
	res      catalog.Resolved
	findings []catalog.Finding
	lines    []chainLine
	nItems   int
	cursor   int // item index
	off      int // first row shown

	// The layout at width rowsW; rebuilt when the width or the chain
	// changes, not per frame.
	rowsW int
	rows  []chainRow
	spans [][2]int // rows [start, end) of each item
}

// Messages of the Chain tab's commands: the chain file (loaded after
// each catalog), the editor's exit.
type (
	chainMsg struct {
		cf  *catalog.ChainFile
		err error
	}
	editedMsg struct{ err error }
)

type lineKind int

const (
	lkPlain lineKind = iota
	lkHeader
	lkEntry
	lkFinding
	lkFix
)

// chainLine is one logical line before wrapping.
type chainLine struct {
	kind   lineKind
	text   string
	plugin string
	indent int // hanging indent of continuation rows, in cells
	item   int // the item the line belongs to, -1 for none
}

// chainRow is one screen row of the wrapped layout.
type chainRow struct {
	kind lineKind
	text string
	item int
}

// set shows cf resolved against c. The findings are those of `abctl chain
// validate`, with the in-process factories fs run on each entry's config
// as a build would (binaries are not started here: that is a dry-run's
// job).
func (t *chainTab) set(cf *catalog.ChainFile, c *catalog.Catalog, fs []gateway.Factory) {
	t.cf = cf
	if c == nil {
		c = &catalog.Catalog{}
	}
	t.res = catalog.Resolve(cf, c)
	t.findings = catalog.ValidateBuild(cf, c, func(name string) (*gateway.Factory, bool) {
		if d, ok := c.Lookup(name); ok && d.Origin.Kind == catalog.OriginBinary {
			return nil, false
		}
		for i := range fs {
			if fs[i].Name == name {
				return &fs[i], true
			}
		}
		return nil, false
	})
	t.lines, t.nItems = t.build()
	t.cursor = clamp(t.cursor, t.nItems)
	t.rows, t.spans, t.rowsW = nil, nil, 0
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

// build returns the logical lines and the number of items. An entry's
// findings belong to the entry's item; a finding on no entry is an item of
// its own.
func (t *chainTab) build() ([]chainLine, int) {
	var out []chainLine
	item := -1
	header := func(text string) {
		out = append(out, chainLine{item: -1}, chainLine{kind: lkHeader, text: text, indent: 4, item: -1})
	}
	// entry starts a new item; indent is where its continuation rows start.
	entry := func(plugin, text string, indent int) {
		item++
		out = append(out, chainLine{kind: lkEntry, text: text, plugin: plugin, indent: indent, item: item})
	}
	// finding adds f's rule, message and fix to the current item, each
	// wrapped under its own text.
	finding := func(lead string, f catalog.Finding, plugin string) {
		head := lead + "✗ " + f.Rule + " "
		fix := strings.Repeat(" ", len(lead)+2) + "fix: "
		out = append(out, chainLine{kind: lkFinding, text: head + f.Msg, plugin: plugin, indent: ansi.StringWidth(head), item: item},
			chainLine{kind: lkFix, text: fix + f.Fix, plugin: plugin, indent: len(fix), item: item})
	}
	used := make([]bool, len(t.findings))
	findingsAt := func(line int, plugin string) {
		for i, f := range t.findings {
			if !used[i] && f.Line == line && (plugin == "" || f.Plugin == "" || f.Plugin == plugin) {
				used[i] = true
				finding("      ", f, plugin)
			}
		}
	}
	out = append(out, chainLine{kind: lkHeader, text: fmt.Sprintf("%s  mode %s  %s", t.cf.Path, t.res.Mode, plural(len(t.findings), "finding")), indent: 2, item: -1})
	for _, ch := range t.res.Chains {
		buf := "no"
		if ch.BuffersBodies {
			buf = "yes"
		}
		header(fmt.Sprintf("%s  (bodies to plugins: %s)", ch.Direction, buf))
		for _, e := range ch.Entries {
			// The entry's number in the file, as errors count it
			// ("entry 3"); on_error says whether it runs.
			pos := fmt.Sprintf("%4d", e.Entry)
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
			head := fmt.Sprintf("%s  %-18s %-8s ", pos, e.Name, e.OnError)
			text := head + caps
			if len(deps) > 0 {
				text += "  needs " + strings.Join(deps, ", ")
			}
			// Continuation rows sit under the capabilities column.
			entry(e.Name, text, len(head))
			findingsAt(e.Line, e.Name)
		}
	}
	if len(t.res.Extensions) > 0 {
		header("extensions (dispatch order)")
		for _, x := range t.res.Extensions {
			entry(x.Plugin, fmt.Sprintf("  %4d  %-18s required=%t slots=%s points=%s",
				x.Priority, x.Plugin, x.Required, orNone(strings.Join(x.Slots, ",")), orNone(strings.Join(x.Points, ","))), 8)
		}
	}
	if len(t.res.Hooks) > 0 {
		header("hooks (bus order)")
		for _, h := range t.res.Hooks {
			entry(h.Plugin, fmt.Sprintf("  %4d  %-18s %s %s %s", h.Order, h.Plugin, h.ID, h.Kind, h.Policy), 8)
		}
	}
	var rest []int
	for i := range t.findings {
		if !used[i] {
			rest = append(rest, i)
		}
	}
	if len(rest) > 0 {
		header("other findings")
		for _, i := range rest {
			f := t.findings[i]
			item++
			f.Rule = "line " + strconv.Itoa(f.Line) + " " + f.Rule + " " + f.Plugin + ":"
			finding("  ", f, f.Plugin)
		}
	}
	return out, item + 1
}

// layout wraps the lines to w cells (the two-cell selection mark
// excluded) and records which rows each item spans. It is cached per
// width: views render only the rows they show.
func (t *chainTab) layout(w int) {
	if t.rows != nil && t.rowsW == w {
		return
	}
	t.rowsW = w
	t.rows = t.rows[:0]
	t.spans = make([][2]int, t.nItems)
	for _, l := range t.lines {
		if l.item >= 0 && (len(t.rows) == 0 || t.rows[len(t.rows)-1].item != l.item) {
			t.spans[l.item][0] = len(t.rows)
		}
		indent := l.indent
		if w-2-indent < 24 {
			// A deep hanging indent would leave too narrow a column.
			indent = min(indent, 8)
		}
		for _, s := range wrap(l.text, w-2, indent) {
			t.rows = append(t.rows, chainRow{kind: l.kind, text: s, item: l.item})
		}
		if l.item >= 0 {
			t.spans[l.item][1] = len(t.rows)
		}
	}
}

// capsText is the long form of capabilities and behaviours.
func capsText(c *catalog.Capabilities, behaviours []string) string {
	var out []string
	if c != nil {
		out = c.BodyWords()
	}
	out = append(out, behaviours...)
	if len(out) == 0 {
		return "-"
	}
	// ", " and not ",": a narrow screen wraps the list between names.
	return strings.Join(out, ", ")
}

func (t *chainTab) selectedPlugin() string {
	if t.nItems == 0 {
		return ""
	}
	for _, l := range t.lines {
		if l.item == t.cursor {
			return l.plugin
		}
	}
	return ""
}

// move moves the cursor by item; page keys move by about a screen of rows.
func (t *chainTab) move(msg tea.KeyPressMsg, k KeyMap, w, h int) {
	if t.nItems == 0 {
		return
	}
	t.layout(w)
	page := max(h-1, 1)
	switch {
	case key.Matches(msg, k.PageDown):
		// The last item that starts within a page below, at least one on.
		target := t.spans[t.cursor][0] + page
		i := t.cursor + 1
		for i+1 < t.nItems && t.spans[i+1][0] <= target {
			i++
		}
		t.cursor = clamp(i, t.nItems)
	case key.Matches(msg, k.PageUp):
		target := t.spans[t.cursor][0] - page
		i := t.cursor - 1
		for i-1 >= 0 && t.spans[i-1][0] >= target {
			i--
		}
		t.cursor = clamp(i, t.nItems)
	default:
		t.cursor = moveCursor(msg, k, t.cursor, t.nItems, h)
	}
}

// itemAt returns the item shown on body row row of a w-column view, or -1
// when the row shows none (a header, a blank, past the end).
func (t *chainTab) itemAt(row, w int) int {
	t.layout(w)
	if i := t.off + row; row >= 0 && i < len(t.rows) {
		return t.rows[i].item
	}
	return -1
}

// scroll returns the first row to show in h rows so that the selected
// item is whole on screen (its top, when it is taller than h). Where room
// is left it also shows what leads up to the item (a section header; the
// file's header above the first item) and, for the last item, what
// follows it.
func (t *chainTab) scroll(h int) int {
	n := len(t.rows)
	if t.nItems == 0 || h <= 0 {
		return 0
	}
	a, b := t.spans[t.cursor][0], t.spans[t.cursor][1]
	off := t.off
	if b > off+h {
		off = b - h
	}
	if a < off || b-a > h {
		off = a
	}
	// Lead-in: the rows after the previous item (all rows before the
	// first one).
	lead := 0
	if t.cursor > 0 {
		lead = t.spans[t.cursor-1][1]
	}
	if lead < off && b-lead <= h {
		off = lead
	}
	if t.cursor == t.nItems-1 && n > off+h && n-h <= a {
		off = n - h
	}
	return max(min(off, n-h), 0)
}

func (t *chainTab) view(w, h int, th theme) []string {
	if t.loadErr != "" {
		out := []string{"", "  " + th.bad.Render("The chain file could not be loaded:"), ""}
		for _, l := range wrapWords(t.loadErr, max(w-4, 20)) {
			out = append(out, "  "+l)
		}
		out = append(out, "")
		for _, l := range wrapWords("Press e to fix it in your editor; it is reloaded when the editor exits (r reloads too).", max(w-4, 20)) {
			out = append(out, "  "+l)
		}
		if len(out) > h {
			out = out[:h]
		}
		return out
	}
	if t.cf == nil {
		return []string{"", "  no chain loaded"}
	}
	t.layout(w)
	t.off = t.scroll(h)
	out := make([]string, 0, h)
	for i := t.off; i < len(t.rows) && i < t.off+h; i++ {
		r := t.rows[i]
		sel := t.nItems > 0 && r.item == t.cursor
		mark := "  "
		if sel && (i == 0 || t.rows[i-1].item != r.item) {
			mark = "> "
		}
		s := fit(mark+r.text, w)
		switch {
		case sel:
			s = th.sel.Render(s)
		case r.kind == lkHeader:
			s = th.title.Render(s)
		case r.kind == lkFinding:
			s = th.bad.Render(s)
		case r.kind == lkFix:
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

// update handles the messages of the commands this pane started;
// handled is false for every other message.
func (t *chainTab) update(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case chainMsg:
		if msg.err != nil {
			// The Chain tab shows the error, so e can fix the file; the
			// last trace ran an older chain and is dropped.
			m.setErr(msg.err)
			t.loadErr, t.cf = msg.err.Error(), nil
			m.cat.setChain(nil)
			m.tr.clear()
			return nil, true
		}
		t.loadErr = ""
		termsafe.Fields(msg.cf) // escaped as the catalog is, so names still match
		t.set(msg.cf, m.cat.c, m.opts.Factories)
		if len(t.findings) > 0 {
			m.tr.clear() // a trace of a chain that no longer builds misleads
		}
		m.cat.setChain(t.positions())
		if n := len(t.findings); n > 0 {
			m.setInfo("chain " + msg.cf.Path + ": " + plural(n, "finding"))
		} else {
			m.setInfo("chain " + msg.cf.Path + ": valid")
		}
		return nil, true
	case editedMsg:
		if msg.err != nil {
			m.setErr(msg.err)
			return nil, true
		}
		return m.loadChain(), true
	case tea.MouseWheelMsg:
		t.cursor = clamp(t.cursor+wheelDelta(msg), t.nItems)
		return nil, true
	case tea.MouseClickMsg:
		if i := t.itemAt(msg.Y-1, t.w); i >= 0 {
			t.cursor = i
		}
		return nil, true
	}
	return nil, false
}

func (t *chainTab) typing() bool { return false }

func (t *chainTab) hints(k KeyMap) []key.Binding {
	return []key.Binding{withHelp(k.Down, "j/k", "move"), withHelp(k.Enter, "enter", "open plugin"), withHelp(k.Edit, "e", "edit"), k.NextTab, k.Help, k.Quit}
}

// keys handles the Chain tab's keys.
func (t *chainTab) keys(m *Model, msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Reload):
		return m.reload()
	case key.Matches(msg, k.Edit):
		return m.edit()
	case key.Matches(msg, k.Enter):
		if name := t.selectedPlugin(); name != "" {
			if m.cat.open(name) {
				m.tab = tabCatalog
			}
		}
		return nil
	}
	t.move(msg, k, t.w, t.h)
	return nil
}

// editorArgs is the command e runs: $VISUAL, else $EDITOR, else vi, as
// git and less do.
func (m *Model) editorArgs() []string {
	editor := m.opts.Getenv("VISUAL")
	if editor == "" {
		editor = m.opts.Getenv("EDITOR")
	}
	args := strings.Fields(editor)
	if len(args) == 0 {
		args = []string{"vi"}
	}
	return args
}

// edit opens the chain file in the editor and revalidates on return. The
// built-in example chain is first written to a temporary file, which is
// then the chain file.
func (m *Model) edit() tea.Cmd {
	if m.opts.ChainPath == "" {
		f, err := os.CreateTemp("", "abctl-chain-*.yaml")
		if err != nil {
			m.setErr(err)
			return nil
		}
		_, err = f.Write(ExampleChainYAML())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			m.setErr(err)
			return nil
		}
		m.opts.ChainPath = f.Name()
	}
	args := m.editorArgs()
	c := exec.Command(args[0], append(args[1:], m.opts.ChainPath)...)
	return tea.ExecProcess(c, func(err error) tea.Msg { return editedMsg{err: err} })
}

// loadChain reads the chain file, or gives the built-in example chain.
func (m *Model) loadChain() tea.Cmd {
	path := m.opts.ChainPath
	return func() tea.Msg {
		if path == "" {
			return chainMsg{cf: ExampleChain()}
		}
		cf, err := catalog.ReadChainFile(path)
		return chainMsg{cf: cf, err: err}
	}
}
