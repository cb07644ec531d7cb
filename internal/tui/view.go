package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func itoa(n int) string { return strconv.Itoa(n) }

// bodyHeight is the rows between the tab bar and the status bar.
func (m *Model) bodyHeight() int { return max(m.h-3, 1) }

// View renders the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "abctl"
	return v
}

// Render returns the screen's text: exactly one line per terminal row, each
// as wide as the terminal.
func (m *Model) Render() string {
	w, h := m.w, m.h
	if w < MinWidth || h < MinHeight {
		return m.tooSmall()
	}
	lines := make([]string, 0, h)
	lines = append(lines, m.tabBar(w))
	var body []string
	bh := m.bodyHeight()
	if m.help {
		body = m.helpView(w, bh)
	} else {
		body = m.panes()[m.tab].view(w, bh, m.th)
	}
	for i := range bh {
		l := ""
		if i < len(body) {
			l = body[i]
		}
		lines = append(lines, fit(l, w))
	}
	lines = append(lines, m.statusBar(w), m.footer(w))
	return strings.Join(lines, "\n")
}

func (m *Model) tooSmall() string {
	msg := []string{
		"abctl: the terminal is too small",
		fmt.Sprintf("it is %d×%d; the TUI needs at least %d×%d", m.w, m.h, MinWidth, MinHeight),
		"enlarge the window, or press q to quit",
	}
	return strings.Join(msg, "\n")
}

// tabX are the columns where each tab's label starts and ends, for clicks.
func tabLabel(i tab) string { return " " + strconv.Itoa(int(i)+1) + " " + tabNames[i] + " " }

func (m *Model) tabBar(w int) string {
	var b strings.Builder
	for i := range m.tabCount() {
		l := tabLabel(i)
		if i == m.tab && !m.help {
			b.WriteString(m.th.tabOn.Render(l))
		} else {
			b.WriteString(m.th.tabOff.Render(l))
		}
		b.WriteString(" ")
	}
	right := "abctl"
	if m.help {
		right = "keys (? or esc closes)"
	}
	used := m.tabBarWidth()
	return b.String() + fit("", max(w-used-len(right)-1, 0)) + m.th.dim.Render(right) + " "
}

func (m *Model) tabBarWidth() int {
	n := 0
	for i := range m.tabCount() {
		n += len(tabLabel(i)) + 1
	}
	return n
}

func (m *Model) statusBar(w int) string {
	var parts []string
	if m.cat.c != nil {
		parts = append(parts, fmt.Sprintf("%d/%d plugins", len(m.cat.rows), len(m.cat.c.Plugins)))
	}
	if m.cat.filtering {
		parts = append(parts, "filter: "+m.cat.edit.view())
	} else if m.cat.filter != "" {
		parts = append(parts, "filter: "+m.cat.filter)
	}
	src := "builtin"
	if len(m.opts.Sources) > 0 {
		src = strings.Join(m.opts.Sources, ",")
	}
	parts = append(parts, src)
	if m.chain.cf != nil {
		if n := len(m.chain.findings); n > 0 {
			parts = append(parts, "chain "+plural(n, "finding"))
		} else {
			parts = append(parts, "chain ok")
		}
	}
	if r := m.tr.run; r != nil && len(r.Events) > 0 {
		parts = append(parts, fmt.Sprintf("step %d/%d", m.tr.cursor+1, len(r.Events)))
	}
	left := " " + strings.Join(parts, " │ ")
	var right string
	switch {
	case m.busy != "":
		right = m.spin.View() + " " + m.busy + "… "
	case m.status != "" && !m.statusOK:
		right = "error: " + m.status + " "
	case m.status != "":
		right = m.status + " "
	}
	// The counts keep their room and a message gets the rest; an error
	// takes up to two thirds. Two spaces keep a long message off the
	// counts.
	if right != "" {
		right = "  " + right
	}
	room := w - ansi.StringWidth(left)
	if m.status != "" && !m.statusOK && m.busy == "" {
		room = max(room, w*2/3)
	}
	rw := min(ansi.StringWidth(right), max(room, 0))
	st := m.th.bar
	if m.status != "" && !m.statusOK && m.busy == "" {
		st = m.th.bad
	}
	return m.th.bar.Render(fit(left, w-rw)) + st.Render(fit(right, rw))
}

// hints are the footer's keys for the current context.
func (m *Model) hints() []key.Binding {
	k := m.keys
	// Short forms keep the footer on one line at 80 columns; ? lists the
	// long ones.
	k.Help = withHelp(k.Help, "?", "help")
	k.NextTab = withHelp(k.NextTab, "tab", "next tab")
	k.Filter = withHelp(k.Filter, "/", "filter")
	k.Back = withHelp(k.Back, "esc", "back")
	p := m.panes()[m.tab]
	if m.help && !p.typing() {
		return []key.Binding{withHelp(k.Down, "j/k", "scroll"), withHelp(k.PageDown, "pgdn/pgup", "page"), withHelp(k.Back, "esc", "close")}
	}
	return p.hints(k)
}

func withHelp(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

func (m *Model) footer(w int) string {
	var b strings.Builder
	for i, kb := range m.hints() {
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(m.th.accent.Render(kb.Help().Key) + " " + m.th.dim.Render(shortDesc(kb.Help().Desc)))
	}
	return fit(" "+b.String(), w)
}

// shortDesc keeps the footer to one line: the first words of a help text.
func shortDesc(s string) string {
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	return s
}

// helpNotes is how many lines end helpLines that are notes, not keys.
const helpNotes = 5

// helpLines are the help screen's lines, unwrapped: the keys by group, then
// helpNotes lines of notes.
func (m *Model) helpLines() []string {
	var out []string
	for _, g := range m.keys.Groups() {
		if g.Title == "Live" && m.tabCount() <= tabLive {
			continue // its keys act only with --attach
		}
		out = append(out, m.th.title.Render(g.Title))
		for _, kb := range g.Bindings {
			out = append(out, "  "+m.th.accent.Render(fit(kb.Help().Key, 14))+" "+kb.Help().Desc)
		}
	}
	return append(out, m.th.title.Render("Mouse"), "  wheel moves the list, click selects a tab or a row",
		m.th.title.Render("Badges"), "  P D H families; r reads body, q writes request, s writes response;",
		"  S streams, F finishes, I init, Y ready")
}

// helpView shows every key with its whole description: in two columns
// when they fit untruncated, else in one column wrapped to the width,
// which j/k, pgup/pgdn and g/G scroll (k9s' and lazygit's help scroll the
// same way). Nothing is cut off at any size.
func (m *Model) helpView(w, h int) []string {
	lines := m.helpLines()
	widest := 0
	for _, l := range lines {
		widest = max(widest, ansi.StringWidth(l))
	}
	if half := (len(lines) + 1) / 2; half <= h && widest <= w/2-1 {
		cw := w / 2
		m.helpOff = 0
		return sideBySide(lines[:half], lines[half:], cw-1, w-cw, " ")
	}
	var one []string
	for i, l := range lines {
		// A key's description continues under the description column;
		// the mouse and badge notes (the last five lines) under their
		// own text.
		indent := 17
		if i >= len(lines)-helpNotes {
			indent = 2
		}
		one = append(one, wrap(l, w, indent)...)
	}
	if len(one) <= h {
		m.helpOff = 0
		return one
	}
	m.helpOff = max(min(m.helpOff, len(one)-h), 0)
	view := slices.Clone(one[m.helpOff : m.helpOff+h])
	if m.helpOff+h < len(one) {
		view[h-1] = m.th.dim.Render(fmt.Sprintf("  ↓ more (%d of %d lines): j/k, pgdn", m.helpOff+h-1, len(one)))
	}
	return view
}

// helpKey scrolls the help screen; ?, esc and q close it.
func (m *Model) helpKey(msg tea.KeyPressMsg) {
	k := m.keys
	page := max(m.bodyHeight()-1, 1)
	switch {
	case key.Matches(msg, k.Help, k.Back, k.Quit):
		m.help, m.helpOff = false, 0
	case key.Matches(msg, k.Down):
		m.helpOff++
	case key.Matches(msg, k.Up):
		m.helpOff = max(m.helpOff-1, 0)
	case key.Matches(msg, k.PageDown):
		m.helpOff += page
	case key.Matches(msg, k.PageUp):
		m.helpOff = max(m.helpOff-page, 0)
	case key.Matches(msg, k.Top):
		m.helpOff = 0
	case key.Matches(msg, k.Bottom):
		m.helpOff = 1 << 20 // clamped by the view
	}
}

// wheelDelta is the rows a wheel event moves a list: -1, 1, or 0 for a
// sideways wheel.
func wheelDelta(msg tea.MouseWheelMsg) int {
	switch msg.Button {
	case tea.MouseWheelUp:
		return -1
	case tea.MouseWheelDown:
		return 1
	}
	return 0
}

// inList reports whether a click falls on a row of the list of a pane
// of w×h cells whose list is lw columns wide beside its detail (at w >=
// wideWidth), or above it (narrower): below the list's header row.
func inList(msg tea.MouseClickMsg, w, h, lw int) bool {
	row := msg.Y - 1 // body row
	listRows := h - 1
	wide := w >= wideWidth
	if !wide {
		listRows = max(h/2, 3) - 1
	}
	return row >= 1 && row <= listRows && (!wide || msg.X < lw)
}

// click switches tabs (row 0), else hands the click to the pane shown.
func (m *Model) click(msg tea.MouseClickMsg) tea.Cmd {
	if msg.Button != tea.MouseLeft || m.help {
		return nil
	}
	if msg.Y == 0 {
		x := 0
		for i := range m.tabCount() {
			n := len(tabLabel(i)) + 1
			if msg.X >= x && msg.X < x+n {
				m.tab = i
				return nil
			}
			x += n
		}
		return nil
	}
	cmd, _ := m.panes()[m.tab].update(m, msg)
	return cmd
}
