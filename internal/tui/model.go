// Package tui is abctl's terminal UI: a Bubble Tea program with three tabs
// (Catalog, Chain, Trace) over a plugin catalog, a chain file and dry-runs
// of recorded exchanges through the real pipeline runtime.
//
// [New] builds the model from [Options]; abctl's ui command runs it with
// tea.NewProgram. Everything slow (loading the catalog, dry-runs, the
// editor) runs in tea.Cmds, so Update and View stay cheap, and View renders
// only the rows that fit on screen.
package tui

import (
	"context"
	"os"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/sdk/gateway"
)

// Minimum terminal size; below it the TUI says how big it needs to be.
const (
	MinWidth  = 60
	MinHeight = 20
	// wideWidth is the width from which detail panes sit beside lists.
	wideWidth = 100
)

// Options configure the TUI.
type Options struct {
	// LoadCatalog loads the catalog; it runs in a command, with a spinner.
	LoadCatalog func(context.Context) (*catalog.Catalog, error)
	// Sources are the catalog source specs, for the status bar.
	Sources []string
	// ChainPath is the chain file; empty loads the built-in example chain.
	ChainPath string
	// Factories make instances for dry-runs (the built-in plugins).
	Factories []gateway.Factory
	// Plugins, when set, makes runnable the chain entries Factories lack:
	// abctl starts plugin binaries (of dir: sources, or --plugin-dir)
	// through the plugin host. It runs in the dry-run's command with the
	// loaded catalog and the names missing; release stops what it started
	// and is called when the dry-run ends.
	Plugins func(ctx context.Context, cat *catalog.Catalog, names []string) (factories []gateway.Factory, release func(), err error)
	// Fixtures are the exchanges the Trace tab offers.
	Fixtures []Exchange
	// Colour enables colour; false follows NO_COLOR.
	Colour bool
	// ReloadFixtures, when set, rereads the fixtures (r); nil keeps
	// Fixtures.
	ReloadFixtures func() ([]Exchange, error)
	// Getenv reads $EDITOR; nil means os.Getenv.
	Getenv func(string) string
	// Attach is the base URL of an abctl serve; when set, a Live tab
	// lists its exchanges as they finish (docs/live.md).
	Attach string
	// SaveDir is where the Live tab's s saves fixtures ("." when empty).
	SaveDir string
}

type tab int

const (
	tabCatalog tab = iota
	tabChain
	tabTrace
	tabLive
	nTabs
)

var tabNames = [nTabs]string{"Catalog", "Chain", "Trace", "Live"}

// tabCount is how many tabs there are: Live only when attached.
func (m *Model) tabCount() tab {
	if m.opts.Attach == "" {
		return tabLive
	}
	return nTabs
}

// Model is the TUI's Bubble Tea model.
type Model struct {
	opts Options
	keys KeyMap
	th   theme
	dark bool
	w, h int

	tab      tab
	help     bool
	helpOff  int // first line of the help screen shown, when it scrolls
	status   string
	statusOK bool
	busy     string // what is running, shown with the spinner
	spin     spinner.Model

	cat   catalogTab
	chain chainTab
	tr    traceTab
	lv    liveTab
}

// New returns the model. Call Init (tea.NewProgram does) to load the
// catalog.
func New(opts Options) *Model {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	m := &Model{opts: opts, keys: DefaultKeyMap(), dark: true, w: 80, h: 24}
	m.th = newTheme(opts.Colour, m.dark)
	m.spin = spinner.New(spinner.WithSpinner(spinner.Line))
	m.tr.fixtures = opts.Fixtures
	m.busy = "loading catalog"
	m.resize()
	if opts.Attach != "" {
		// Attached, the live exchanges are what the user came for.
		m.lv.base = strings.TrimSuffix(opts.Attach, "/")
		m.tab = tabLive
	}
	return m
}

// catalogMsg carries the catalog that Init and r load; the Catalog tab
// takes it. Each pane's other messages are declared in its file.
type catalogMsg struct {
	cat *catalog.Catalog
	err error
}

// HasRun reports whether the Trace tab holds a dry-run's trace.
func (m *Model) HasRun() bool { return m.tr.run != nil }

// Init loads the catalog and asks the terminal for its background colour.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.loadCatalog(), m.spin.Tick, tea.RequestBackgroundColor, m.lv.attach())
}

// Close stops the Live tab's connection.
func (m *Model) Close() { m.lv.close() }

func (m *Model) loadCatalog() tea.Cmd {
	load := m.opts.LoadCatalog
	return func() tea.Msg {
		if load == nil {
			return catalogMsg{err: errNoCatalog}
		}
		c, err := load(context.Background())
		return catalogMsg{cat: c, err: err}
	}
}

type constErr string

func (e constErr) Error() string { return string(e) }

const errNoCatalog = constErr("no catalog source configured")

func (m *Model) setErr(err error) {
	m.status, m.statusOK = oneLine(err.Error()), false
}

func (m *Model) setInfo(s string) { m.status, m.statusOK = oneLine(s), true }

// oneLine joins s onto one line, its control characters escaped: errors
// and names quote files, plugins and traffic.
func oneLine(s string) string { return termsafe.Line(strings.Join(strings.Fields(s), " ")) }

// Update handles a message: the root's own (size, colour, spinner, the
// keys and clicks that switch tabs or show help), else it routes it: keys
// and the mouse to the pane shown, a command's message to the pane whose
// command sent it.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.resize()
		return m, nil
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		m.th = newTheme(m.opts.Colour, m.dark)
		return m, nil
	case spinner.TickMsg:
		if m.busy == "" {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case tea.MouseWheelMsg:
		if m.help || wheelDelta(msg) == 0 {
			return m, nil
		}
		cmd, _ := m.panes()[m.tab].update(m, msg)
		return m, cmd
	case tea.MouseClickMsg:
		return m, m.click(msg)
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	for _, p := range m.panes() {
		if cmd, ok := p.update(m, msg); ok {
			return m, cmd
		}
	}
	return m, nil
}

// pane is one tab as the root sees it: the root keeps what the tabs share
// (status line, spinner, help, which tab shows) and routes to the pane
// the messages of its commands and, while it shows, the keys and the
// mouse. Each pane's file holds its messages, keys, hints and view.
type pane interface {
	// update handles a message of the pane's own commands, and the
	// mouse (wheel, a click below the tab bar) while the pane shows;
	// handled is false for any other message.
	update(m *Model, msg tea.Msg) (cmd tea.Cmd, handled bool)
	// keys handles a key press while the pane shows: every key but the
	// tab switches, ? and q, and all but ctrl+c while it is typing.
	keys(m *Model, msg tea.KeyPressMsg) tea.Cmd
	// typing reports whether a text field of the pane (a filter, a
	// prompt) is taking the keys.
	typing() bool
	// hints are the footer's keys for the pane's state; k holds the
	// short help texts.
	hints(k KeyMap) []key.Binding
	// view renders the pane's body in w×h cells.
	view(w, h int, th theme) []string
	// setSize gives the pane the size of its body (the terminal less the
	// tab bar and the status line); its keys page by it.
	setSize(w, h int)
}

// paneSize is the body size a pane was last given; each tab embeds it.
type paneSize struct{ w, h int }

func (s *paneSize) setSize(w, h int) { s.w, s.h = w, h }

// resize gives every pane its body size.
func (m *Model) resize() {
	for _, p := range m.panes() {
		p.setSize(m.w, m.bodyHeight())
	}
}

// panes are the tabs, in tab order.
func (m *Model) panes() [nTabs]pane { return [nTabs]pane{&m.cat, &m.chain, &m.tr, &m.lv} }

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if key.Matches(msg, k.Force) {
		return tea.Quit
	}
	p := m.panes()[m.tab]
	if p.typing() {
		return p.keys(m, msg) // q, r, digits are text while typed
	}
	if m.help {
		m.helpKey(msg)
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.help = true
		return nil
	case key.Matches(msg, k.NextTab):
		m.tab = (m.tab + 1) % m.tabCount()
		return nil
	case key.Matches(msg, k.PrevTab):
		m.tab = (m.tab + m.tabCount() - 1) % m.tabCount()
		return nil
	case key.Matches(msg, k.Tab4) && m.tabCount() > tabLive:
		m.tab = tabLive
		return nil
	case key.Matches(msg, k.Tab1):
		m.tab = tabCatalog
		return nil
	case key.Matches(msg, k.Tab2):
		m.tab = tabChain
		return nil
	case key.Matches(msg, k.Tab3):
		m.tab = tabTrace
		return nil
	}
	return p.keys(m, msg)
}

// reload rereads the catalog (and, once it is loaded, the chain) and the
// fixtures from disk.
func (m *Model) reload() tea.Cmd {
	if m.busy != "" {
		m.setInfo("busy: " + m.busy)
		return nil
	}
	if m.opts.ReloadFixtures != nil {
		xs, err := m.opts.ReloadFixtures()
		if err != nil {
			m.setErr(err)
			return nil
		}
		m.tr.setFixtures(xs)
	}
	m.busy = "reloading"
	return tea.Batch(m.loadCatalog(), m.spin.Tick)
}

// shown is the rows a list showed at its last render, or h before the
// first.
func shown(rows, h int) int {
	if rows > 0 {
		return rows
	}
	return h
}

// moveCursor applies the list movement keys to cursor in a list of n rows
// shown h rows at a time: pgdn/pgup move by the visible page less one row,
// which stays in view as context (pgdn from the top selects the last row
// that was shown).
func moveCursor(msg tea.KeyPressMsg, k KeyMap, cursor, n, h int) int {
	switch {
	case key.Matches(msg, k.Up):
		cursor--
	case key.Matches(msg, k.Down):
		cursor++
	case key.Matches(msg, k.PageUp):
		cursor -= max(h-1, 1)
	case key.Matches(msg, k.PageDown):
		cursor += max(h-1, 1)
	case key.Matches(msg, k.Top):
		cursor = 0
	case key.Matches(msg, k.Bottom):
		cursor = n - 1
	}
	return clamp(cursor, n)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return itoa(n) + " " + word + "s"
}
