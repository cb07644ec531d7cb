package tui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
)

// catalogTab is the Catalog tab: a filterable list and a detail pane.
type catalogTab struct {
	paneSize
	c          *catalog.Catalog
	badges     []string // per plugin, computed once
	nameW      int      // width of the name column: the longest name, bounded
	search     []string // lower-case name and description, per plugin
	requiredBy map[string][]string
	inChain    map[string]int // plugin name → first active position in the loaded chain

	filter    string // the filter applied
	filtering bool
	edit      field // edits filter while filtering
	rows      []int // indices into c.Plugins that pass the filter
	cursor    int
	off       int
	detail    bool // focus on the detail pane
	detailOff int
	// listRows and detailRows are how many rows of the list and of the
	// detail pane the last render showed: a page for pgup/pgdn.
	listRows, detailRows int
}

func (t *catalogTab) setCatalog(c *catalog.Catalog) {
	t.c = c
	t.badges = make([]string, len(c.Plugins))
	t.search = make([]string, len(c.Plugins))
	t.requiredBy = map[string][]string{}
	t.nameW = 12
	for i := range c.Plugins {
		d := &c.Plugins[i]
		t.nameW = min(max(t.nameW, ansi.StringWidth(d.Name)), 24)
		t.badges[i] = badges(d)
		t.search[i] = strings.ToLower(d.Name + " " + d.Description)
		if d.Capabilities != nil {
			for _, r := range append(slices.Clone(d.Capabilities.Requires), d.Capabilities.RequiresAny...) {
				if !slices.Contains(t.requiredBy[r], d.Name) {
					t.requiredBy[r] = append(t.requiredBy[r], d.Name)
				}
			}
		}
	}
	t.applyFilter()
}

// badges is the compact capability column: families, body access,
// behaviours; docs/keys.md has the legend.
func badges(d *catalog.Descriptor) string {
	flag := func(on bool, c string) string {
		if on {
			return c
		}
		return "·"
	}
	var b strings.Builder
	b.WriteString(flag(d.HasFamily(family.Pipeline), "P"))
	b.WriteString(flag(d.HasFamily(family.Dispatch), "D"))
	b.WriteString(flag(d.HasFamily(family.Hooks), "H"))
	b.WriteByte(' ')
	c := d.Capabilities
	b.WriteString(flag(c != nil && c.ReadsBody, "r"))
	b.WriteString(flag(c != nil && c.WritesRequestBody, "q"))
	b.WriteString(flag(c != nil && c.WritesResponseBody, "s"))
	b.WriteByte(' ')
	has := func(x string) bool { return slices.Contains(d.Behaviours, x) }
	b.WriteString(flag(has(gateway.BehaviourStream), "S"))
	b.WriteString(flag(has(gateway.BehaviourFinish), "F"))
	b.WriteString(flag(has(gateway.BehaviourInit), "I"))
	b.WriteString(flag(has(gateway.BehaviourReady), "Y"))
	return b.String()
}

func (t *catalogTab) applyFilter() {
	t.rows = t.rows[:0]
	if t.c == nil {
		return
	}
	f := strings.ToLower(t.filter)
	for i := range t.c.Plugins {
		if f == "" || strings.Contains(t.search[i], f) {
			t.rows = append(t.rows, i)
		}
	}
	t.cursor = clamp(t.cursor, len(t.rows))
	t.detailOff = 0
}

func (t *catalogTab) selected() *catalog.Descriptor {
	if t.c == nil || len(t.rows) == 0 {
		return nil
	}
	return &t.c.Plugins[t.rows[t.cursor]]
}

// open shows the plugin's detail, as enter on its row does; false when
// the catalog has no such plugin.
func (t *catalogTab) open(name string) bool {
	if !t.selectName(name) {
		return false
	}
	t.detail = true
	return true
}

// setChain marks the plugins of the loaded chain: their first active
// positions, nil when no chain is loaded.
func (t *catalogTab) setChain(positions map[string]int) { t.inChain = positions }

// selectName clears the filter and moves the cursor to the plugin.
func (t *catalogTab) selectName(name string) bool {
	if t.c == nil {
		return false
	}
	t.filter, t.filtering = "", false
	t.applyFilter()
	for i, p := range t.rows {
		if t.c.Plugins[p].Name == name {
			t.cursor, t.detailOff = i, 0
			return true
		}
	}
	return false
}

func (t *catalogTab) filterKey(msg tea.KeyPressMsg, k KeyMap) {
	switch {
	case key.Matches(msg, k.Back):
		t.filter, t.filtering = "", false
	case key.Matches(msg, k.Enter):
		t.filtering = false
		return
	case key.Matches(msg, k.Up, k.Down) && msg.Text == "":
		t.cursor = moveCursor(msg, k, t.cursor, len(t.rows), 0)
		return
	default:
		t.edit.edit(msg)
		if t.edit.value() == t.filter {
			return // the cursor moved
		}
		t.filter = t.edit.value()
	}
	t.applyFilter()
}

func (t *catalogTab) key(msg tea.KeyPressMsg, k KeyMap, h int) {
	switch {
	case key.Matches(msg, k.Filter):
		t.filtering, t.detail = true, false
		t.edit.set(t.filter)
		return
	case key.Matches(msg, k.Enter):
		t.detail = t.selected() != nil
		return
	case key.Matches(msg, k.Back):
		if t.detail {
			t.detail = false
		} else if t.filter != "" {
			t.filter = ""
			t.applyFilter()
		}
		return
	}
	if t.detail {
		// The detail pane scrolls; its length is only known at render
		// time, so View clamps detailOff.
		t.detailOff = max(moveCursor(msg, k, t.detailOff, 1<<20, shown(t.detailRows, h)), 0)
		if key.Matches(msg, k.Bottom) {
			t.detailOff = 1 << 20
		}
		return
	}
	prev := t.cursor
	t.cursor = moveCursor(msg, k, t.cursor, len(t.rows), shown(t.listRows, h))
	if t.cursor != prev {
		t.detailOff = 0
	}
}

// view renders the tab into h lines of w cells.
func (t *catalogTab) view(w, h int, th theme) []string {
	if t.c == nil {
		return []string{"", "  no catalog loaded"}
	}
	if w >= wideWidth {
		lw, rw := catalogSplit(w)
		return sideBySide(t.listView(lw, h, th), t.detailView(rw, h, th), lw, rw, " │ ")
	}
	lh := max(h/2, 3)
	dh := h - lh - 1
	out := pad(t.listView(w, lh, th), lh)
	out = append(out, th.dim.Render(strings.Repeat("─", w)))
	return append(out, t.detailView(w, dh, th)...)
}

func (t *catalogTab) listView(w, h int, th theme) []string {
	out := make([]string, 0, h)
	head := "  " + fit("NAME", t.nameW) + " " + fit("CAPS", 12) + " DESCRIPTION"
	out = append(out, th.title.Render(fit(head, w)))
	rows := h - 1
	t.listRows = rows
	t.off = window(t.cursor, t.off, rows, len(t.rows))
	if len(t.rows) == 0 {
		out = append(out, fit("  no plugin matches "+strconv.Quote(t.filter)+" (esc clears the filter)", w))
	}
	for i := t.off; i < len(t.rows) && i < t.off+rows; i++ {
		d := &t.c.Plugins[t.rows[i]]
		mark := "  "
		if i == t.cursor {
			mark = "> "
		}
		line := fit(mark+fit(d.Name, t.nameW)+" "+t.badges[t.rows[i]]+" "+d.Description, w)
		if i == t.cursor {
			line = th.sel.Render(line)
		}
		out = append(out, line)
	}
	return out
}

func (t *catalogTab) detailView(w, h int, th theme) []string {
	d := t.selected()
	if d == nil {
		return nil
	}
	lines := t.detailLines(d, w, th)
	t.detailRows = h
	t.detailOff = min(t.detailOff, max(len(lines)-h, 0))
	end := min(t.detailOff+h, len(lines))
	return lines[t.detailOff:end]
}

// detailLines is everything the catalog knows about d, wrapped to w.
func (t *catalogTab) detailLines(d *catalog.Descriptor, w int, th theme) []string {
	var out []string
	add := func(label, value string) {
		s := th.dim.Render(fit(label, 13)) + value
		if value == "" {
			s = th.dim.Render(label)
		}
		out = append(out, wrap(s, w, 13)...)
	}
	title := th.accent.Render(d.Name)
	if d.Version != "" {
		title += " " + d.Version
	}
	if t.detail {
		title += th.dim.Render("  (j/k scroll, esc back)")
	}
	out = append(out, title)
	add("description", d.Description)
	add("families", strings.Join(d.Families, ", "))
	add("origin", originText(d.Origin))
	if c := d.Capabilities; c != nil {
		add("body", orNone(strings.Join(c.BodyPhrases(), ", ")))
		add("behaviours", orNone(strings.Join(d.Behaviours, ", ")))
		add("requires", t.depText(c.Requires, th))
		if len(c.RequiresAny) > 0 {
			add("requires any", t.depText(c.RequiresAny, th))
		}
		if len(c.Extensions) > 0 {
			add("extensions", "")
			for _, l := range catalog.ExtensionLines(c.Extensions) {
				out = append(out, wrap("  "+l, w, 4)...)
			}
		}
	}
	add("required by", orNone(strings.Join(t.requiredBy[d.Name], ", ")))
	if pos, ok := t.inChain[d.Name]; ok {
		add("in chain", "position "+strconv.Itoa(pos))
	} else if t.inChain != nil {
		add("in chain", "no")
	}
	for _, x := range catalog.Details(d, ", ") {
		if !x.List {
			add(x.Key, orNone(x.Value))
			continue
		}
		add(x.Key, "")
		for _, l := range x.Lines {
			out = append(out, wrap("  "+l, w, 4)...)
		}
	}
	return out
}

// depText marks each dependency as satisfied or not by the loaded chain.
func (t *catalogTab) depText(names []string, th theme) string {
	if len(names) == 0 {
		return "none"
	}
	parts := make([]string, len(names))
	for i, n := range names {
		switch _, ok := t.inChain[n]; {
		case t.inChain == nil:
			parts[i] = n
		case ok:
			parts[i] = n + " " + th.good.Render("✓ in chain")
		default:
			parts[i] = n + " " + th.bad.Render("✗ not in chain")
		}
	}
	return strings.Join(parts, ", ")
}

func originText(o catalog.Origin) string {
	s := o.Kind
	if o.String() != o.Kind {
		s += " " + o.String()
	}
	if o.Source != "" && o.Source != o.Kind {
		s += " (source " + o.Source + ")"
	}
	if o.SHA256 != "" {
		s += " sha256:" + o.SHA256[:min(12, len(o.SHA256))]
	}
	return s
}

func orNone(s string) string { return cmp.Or(s, "none") }

// update handles the messages of the commands this pane started;
// handled is false for every other message.
func (t *catalogTab) update(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case catalogMsg:
		m.busy = ""
		if msg.err != nil {
			m.setErr(msg.err)
			return nil, true
		}
		// Names and descriptions from url:, file: and dir: sources are
		// shown escaped: they must not drive the terminal.
		termsafe.Fields(msg.cat)
		t.setCatalog(msg.cat)
		m.setInfo("catalog loaded")
		return m.loadChain(), true
	case tea.MouseWheelMsg:
		switch d := wheelDelta(msg); {
		case t.filtering:
		case t.detail:
			t.detailOff = max(t.detailOff+d, 0)
		default:
			t.cursor = clamp(t.cursor+d, len(t.rows))
		}
		return nil, true
	case tea.MouseClickMsg:
		if lw, _ := catalogSplit(t.w); inList(msg, t.w, t.h, lw) {
			t.cursor = clamp(t.off+msg.Y-2, len(t.rows))
			t.detail = false
		}
		return nil, true
	}
	return nil, false
}

func (t *catalogTab) typing() bool { return t.filtering }

func (t *catalogTab) hints(k KeyMap) []key.Binding {
	switch {
	case t.filtering:
		return []key.Binding{withHelp(k.Enter, "enter", "keep filter"), withHelp(k.Back, "esc", "clear"), k.Force}
	case t.detail:
		return []key.Binding{withHelp(k.Down, "j/k", "scroll"), k.Back, k.NextTab, k.Help, k.Quit}
	}
	return []key.Binding{k.Filter, withHelp(k.Down, "j/k", "move"), withHelp(k.Enter, "enter", "details"), k.NextTab, k.Help, k.Quit}
}

// keys handles the Catalog tab's keys.
func (t *catalogTab) keys(m *Model, msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case t.filtering:
		t.filterKey(msg, m.keys)
	case key.Matches(msg, m.keys.Reload):
		return m.reload()
	default:
		t.key(msg, m.keys, t.h)
	}
	return nil
}
