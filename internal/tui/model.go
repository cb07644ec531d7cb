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
	"os/exec"
	"slices"
	"strings"
	"time"

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

	liveCh     chan tea.Msg
	liveCancel context.CancelFunc
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

// Messages of the commands.
type (
	catalogMsg struct {
		cat *catalog.Catalog
		err error
	}
	chainMsg struct {
		cf  *catalog.ChainFile
		err error
	}
	runMsg struct {
		run *Run
		err error
	}
	editedMsg struct{ err error }
	playMsg   struct{ id int }
)

// HasRun reports whether the Trace tab holds a dry-run's trace.
func (m *Model) HasRun() bool { return m.tr.run != nil }

// Init loads the catalog and asks the terminal for its background colour.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.loadCatalog(), m.spin.Tick, tea.RequestBackgroundColor, m.attach())
}

// attach (re)connects the Live tab to serve's event stream; nil when not
// attached.
func (m *Model) attach() tea.Cmd {
	if m.lv.base == "" {
		return nil
	}
	if m.liveCancel != nil {
		m.liveCancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan tea.Msg, 64)
	m.liveCh, m.liveCancel = ch, cancel
	m.lv.state, m.lv.ok = "connecting", true
	go liveConnect(ctx, m.lv.base, ch)
	return waitLive(ch)
}

// waitLive delivers the Live tab's next message; Update re-arms it.
func waitLive(ch chan tea.Msg) tea.Cmd {
	return func() tea.Msg { return <-ch }
}

// Close stops the Live tab's connection.
func (m *Model) Close() {
	if m.liveCancel != nil {
		m.liveCancel()
	}
}

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

func (m *Model) setErr(err error) {
	m.status, m.statusOK = oneLine(err.Error()), false
}

func (m *Model) setInfo(s string) { m.status, m.statusOK = oneLine(s), true }

// oneLine joins s onto one line, its control characters escaped: errors
// and names quote files, plugins and traffic.
func oneLine(s string) string { return termsafe.Line(strings.Join(strings.Fields(s), " ")) }

// Update handles a message: the root's own (size, colour, spinner, mouse,
// keys), else it routes the message to the pane whose command sent it.
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
		return m, m.wheel(msg)
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
// the messages of its commands and, while it shows, the keys.
type pane interface {
	// update handles a message of the pane's own commands; handled is
	// false for any other.
	update(m *Model, msg tea.Msg) (cmd tea.Cmd, handled bool)
	// keys handles a key press while the pane shows.
	keys(m *Model, msg tea.KeyPressMsg) tea.Cmd
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

func (m *Model) playTick() tea.Cmd {
	id := m.tr.playID
	return tea.Tick(150*time.Millisecond, func(time.Time) tea.Msg { return playMsg{id: id} })
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if key.Matches(msg, k.Force) {
		return tea.Quit
	}
	if m.cat.filtering {
		m.cat.filterKey(msg, k)
		return nil
	}
	if m.lv.filtering {
		m.lv.filterKey(m, msg)
		return nil
	}
	if m.tab == tabTrace && m.tr.prompt != 0 {
		m.tr.promptKey(m, msg) // q, r, digits are text while a query is typed
		return nil
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
	case key.Matches(msg, k.Reload) && m.tab == tabLive:
		return m.attach()
	case key.Matches(msg, k.Reload):
		return m.reload()
	}
	return m.panes()[m.tab].keys(m, msg)
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
		m.tr.fixtures, m.tr.pick = xs, clamp(m.tr.pick, len(xs))
	}
	m.busy = "reloading"
	return tea.Batch(m.loadCatalog(), m.spin.Tick)
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

func (m *Model) dryRun() tea.Cmd {
	t := &m.tr
	if len(t.fixtures) == 0 {
		m.setErr(constErr("no fixtures: start abctl ui with --fixtures DIR"))
		return nil
	}
	if m.busy != "" {
		return nil
	}
	x := t.fixtures[clamp(t.pick, len(t.fixtures))]
	cf, fs, cat, plugins := m.chain.cf, m.opts.Factories, m.cat.c, m.opts.Plugins
	m.busy = "dry-run " + x.Name
	run := func() tea.Msg {
		ctx := context.Background()
		if plugins != nil && cf != nil {
			if missing := missingPlugins(cf, x.direction(), fs); len(missing) > 0 {
				more, release, err := plugins(ctx, cat, missing)
				if release != nil {
					defer release()
				}
				if err != nil {
					return runMsg{err: err}
				}
				fs = append(slices.Clip(fs), more...)
			}
		}
		r, err := DryRun(ctx, cf, fs, x)
		return runMsg{run: r, err: err}
	}
	return tea.Batch(run, m.spin.Tick)
}

// missingPlugins returns the names of the active entries of cf's dir chain
// that no factory of fs makes, each once, in chain order.
func missingPlugins(cf *catalog.ChainFile, dir gateway.Direction, fs []gateway.Factory) []string {
	var out []string
	for _, e := range cf.Direction(dir) {
		if e.OnError == "off" || slices.Contains(out, e.Name) ||
			slices.ContainsFunc(fs, func(f gateway.Factory) bool { return f.Name == e.Name }) {
			continue
		}
		out = append(out, e.Name)
	}
	return out
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
