package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/replay/live"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/sse"
)

// liveTab lists the exchanges of an abctl serve (its API, docs/live.md) as
// they finish. Paused, it keeps what arrives aside and counts it.
type liveTab struct {
	paneSize
	base string // serve's base URL

	rows      []live.Summary // shown, oldest first
	held      []live.Summary // arrived while paused: the last of them
	heldN     int            // how many arrived while paused
	seen      map[uint64]bool
	paused    bool
	cursor    int
	off       int
	filter    string // the filter applied
	filtering bool
	edit      field  // edits filter while filtering
	state     string // connecting, live, or why the stream ended
	ok        bool
	missed    uint64 // events lost to reconnections after falling behind

	ch     chan tea.Msg       // the connection's messages
	cancel context.CancelFunc // ends the connection
}

// Messages of the Live tab's commands.
type (
	liveArrivedMsg struct{ sums []live.Summary }
	liveEndMsg     struct{ err error }
	// liveMissedMsg: the tab fell behind, serve cut its stream, and it
	// reconnected; n events were lost meanwhile.
	liveMissedMsg struct{ n uint64 }
	liveOpenMsg   struct {
		run *Run
		err error
	}
	liveSavedMsg struct {
		path   string // the fixture
		golden string // its golden trace, when a chain was given
		err    error
	}
)

// shown returns the rows the filter keeps.
func (l *liveTab) shown() []live.Summary {
	if l.filter == "" {
		return l.rows
	}
	q := strings.ToLower(l.filter)
	var out []live.Summary
	for _, s := range l.rows {
		hay := strings.ToLower(fmt.Sprintf("%d %s %s %d %s %s %s", s.ID, s.Method, s.Path, s.Status, s.Outcome, s.DeniedBy, s.Reason))
		if strings.Contains(hay, q) {
			out = append(out, s)
		}
	}
	return out
}

func (l *liveTab) add(sums []live.Summary) {
	if l.seen == nil {
		l.seen = map[uint64]bool{}
	}
	for _, s := range sums {
		if l.seen[s.ID] {
			continue
		}
		l.seen[s.ID] = true
		termsafe.Fields(&s)
		if l.paused {
			// Only the last ring's worth is shown on resume; the rest is
			// counted, not kept (163k held exchanges once grew without
			// limit).
			l.held = append(l.held, s)
			l.heldN++
			if len(l.held) > 2*live.DefaultRing {
				l.held = append([]live.Summary(nil), l.held[len(l.held)-live.DefaultRing:]...)
			}
		} else {
			l.rows = append(l.rows, s)
		}
	}
	l.trim()
	if len(l.seen) > 4*live.DefaultRing {
		// Ids only repeat between the backlog and the first events, so
		// the ids still shown or held are enough.
		l.seen = make(map[uint64]bool, len(l.rows)+len(l.held))
		for _, s := range l.rows {
			l.seen[s.ID] = true
		}
		for _, s := range l.held {
			l.seen[s.ID] = true
		}
	}
}

// trim keeps memory bounded like serve's own ring.
func (l *liveTab) trim() {
	if n := len(l.rows) - live.DefaultRing; n > 0 {
		l.rows = append([]live.Summary(nil), l.rows[n:]...)
		l.cursor = max(l.cursor-n, 0)
	}
}

func (l *liveTab) togglePause() {
	l.paused = !l.paused
	if !l.paused {
		l.rows = append(l.rows, l.held...)
		l.held, l.heldN = nil, 0
		l.trim()
	}
}

func (l *liveTab) selected() (live.Summary, bool) {
	rows := l.shown()
	if l.cursor < 0 || l.cursor >= len(rows) {
		return live.Summary{}, false
	}
	return rows[l.cursor], true
}

// sparkline draws a frame count as one bar cell: none, then one step per
// doubling.
func sparkline(frames int) string {
	const bars = "▁▂▃▄▅▆▇█"
	if frames == 0 {
		return " "
	}
	i := 0
	for n := frames; n > 1 && i < 7; n /= 2 {
		i++
	}
	return string([]rune(bars)[i])
}

func (l *liveTab) view(w, h int, th theme) []string {
	head := "Live " + redact.URL(l.base) + "  " // the API token may be in it
	if l.ok {
		head += th.good.Render(l.state)
	} else {
		head += th.bad.Render(l.state)
	}
	if l.paused {
		p := "  PAUSED (space resumes)"
		if n := l.heldN; n > 0 {
			p += fmt.Sprintf(" held:%d", n) // arrived meanwhile
		}
		head += th.warn.Render(p)
	}
	if l.filtering {
		head += "  filter: " + l.edit.view()
	} else if l.filter != "" {
		head += "  filter: " + l.filter
	}
	out := []string{head}
	rows := l.shown()
	out = append(out, th.dim.Render(fmt.Sprintf("%6s  %-6s %-6s %-7s %-14s %9s %s  %s", "ID", "METHOD", "STATUS", "OUTCOME", "DENIED BY", "DURATION", "F", "PATH")))
	room := h - 2
	if room < 1 {
		return out
	}
	l.cursor = clamp(l.cursor, len(rows))
	if l.cursor < l.off {
		l.off = l.cursor
	}
	if l.cursor >= l.off+room {
		l.off = l.cursor - room + 1
	}
	if len(rows) == 0 {
		out = append(out, th.dim.Render("  no exchanges yet: send traffic through serve"))
	}
	for i := l.off; i < len(rows) && i < l.off+room; i++ {
		s := rows[i]
		outcome := s.Outcome
		if s.Cut {
			outcome = "cut"
		}
		line := fmt.Sprintf("%6d  %-6s %-6d %-7s %-14s %9s %s  %s", s.ID, s.Method, s.Status, outcome, s.DeniedBy,
			time.Duration(s.DurationNS).Round(time.Microsecond*10), sparkline(s.Frames), s.Path)
		switch {
		case i == l.cursor:
			line = th.sel.Render(fit(line, w))
		case s.Outcome != "allow":
			line = th.bad.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// liveConnect subscribes to serve's event stream and then reads the
// exchanges it already keeps: every exchange that finishes from the
// subscription on arrives as a message on ch, none twice (the tab drops
// repeats by id). When serve cuts the stream because the tab fell behind
// (overflow), it reconnects at once, resuming after the last event it
// had (Last-Event-ID), and reports how many events it missed
// (liveMissedMsg). It ends with a liveEndMsg.
func liveConnect(ctx context.Context, base string, ch chan<- tea.Msg) {
	send := func(m tea.Msg) bool {
		select {
		case ch <- m:
			return true
		case <-ctx.Done():
			return false
		}
	}
	err := live.Client{Base: base}.Subscribe(ctx, live.Subscriber{
		Arrived: func(s []live.Summary) bool { return send(liveArrivedMsg{s}) },
		Missed:  func(n uint64) bool { return send(liveMissedMsg{n}) },
	})
	if err != nil {
		send(liveEndMsg{err})
	}
}

// openLive reads one exchange from serve and makes it a Run the Trace
// tab steps through with its usual keys.
func openLive(base string, id uint64) tea.Cmd {
	return func() tea.Msg {
		d, err := live.Client{Base: base}.Detail(context.Background(), id)
		if err != nil {
			return liveOpenMsg{err: err}
		}
		s := d.Exchange
		run := &Run{Fixture: fmt.Sprintf("live #%d %s %s", s.ID, s.Method, s.Path), Events: d.Trace.Events,
			Status: s.Status, Warnings: d.Trace.Warnings, Duration: time.Duration(s.DurationNS),
			Outcome: gateway.Outcome{Kind: outcomeKind(s.Outcome), Status: d.Trace.Outcome.Status, DeniedBy: s.DeniedBy, Reason: s.Reason}}
		run.ReqBefore = d.Request.Body.Bytes()
		run.ReqAfter = run.ReqBefore
		if up := d.Upstream; up != nil {
			if len(up.Chunks) > 0 {
				var fr sse.Framer
				for _, c := range up.Chunks {
					b := c.Body.Bytes()
					run.RespBefore = append(run.RespBefore, b...)
					_ = fr.Feed(b, func(raw []byte, isFrame bool) error {
						if isFrame {
							run.Frames = append(run.Frames, append([]byte(nil), raw...))
						}
						return nil
					})
				}
				if run.Frames == nil {
					run.Frames = [][]byte{}
				}
			} else {
				run.RespBefore = up.Body.Bytes()
			}
			run.RespAfter = run.RespBefore
		}
		return liveOpenMsg{run: run}
	}
}

func outcomeKind(s string) gateway.OutcomeKind {
	switch s {
	case "allow":
		return gateway.OutcomeAllow
	case "deny":
		return gateway.OutcomeDeny
	}
	return gateway.OutcomeError
}

// saveLive writes one exchange's fixture from serve into dir, never over
// an existing file. With chain set (the chain serve runs), it also writes
// the exchange's golden trace, dir/golden/NAME.json, as replay --update
// would: serve's live trace with durations zeroed, which a replay of the
// fixture through that chain reproduces, and a copy of the chain as
// dir/chain.yaml (unless the same chain is there already). dir is then a
// replay suite: `abctl replay DIR` passes on it.
func saveLive(base, dir, chain string, s live.Summary) tea.Cmd {
	return func() tea.Msg {
		c := live.Client{Base: base}
		data, err := c.Fixture(context.Background(), s.ID)
		if err != nil {
			return liveSavedMsg{err: fmt.Errorf("exchange %d: %w", s.ID, err)}
		}
		if _, err := fixture.Parse("exchange "+strconv.FormatUint(s.ID, 10), data); err != nil {
			return liveSavedMsg{err: err}
		}
		var golden []byte
		if chain != "" {
			d, err := c.Detail(context.Background(), s.ID)
			if err != nil {
				return liveSavedMsg{err: fmt.Errorf("exchange %d: %w", s.ID, err)}
			}
			if golden, err = d.Trace.WithoutDurations().MarshalIndent(); err != nil {
				return liveSavedMsg{err: fmt.Errorf("exchange %d: golden: %w", s.ID, err)}
			}
			if err := os.MkdirAll(filepath.Join(dir, "golden"), 0o755); err != nil {
				return liveSavedMsg{err: err}
			}
			if err := saveSuiteChain(dir, chain); err != nil {
				return liveSavedMsg{err: err}
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return liveSavedMsg{err: err}
		}
		stem := fmt.Sprintf("live-%d-%s-%s", s.ID, strings.ToLower(fixture.NamePart(s.Method, "request")), fixture.NamePart(strings.Trim(s.Path, "/"), "root"))
		name, err := fixture.CreateUnique(dir, func(suffix string) string { return stem + "-" + suffix + fixture.Ext }, data)
		if err != nil {
			return liveSavedMsg{err: err}
		}
		msg := liveSavedMsg{path: filepath.Clean(name)}
		if golden != nil {
			// The fixture's name is new, so no golden of that name exists
			// (an orphan's aside, which replay reports).
			msg.golden = replay.GoldenPath(filepath.Join(dir, "golden"), name)
			if err := fixture.WriteAtomic(msg.golden, golden); err != nil {
				return liveSavedMsg{path: msg.path, err: fmt.Errorf("saved %s, but not its golden: %w", msg.path, err)}
			}
		}
		return msg
	}
}

// saveSuiteChain makes dir/chain.yaml a copy of the chain file at chain,
// never over another chain: goldens saved through one chain do not
// replay through another.
func saveSuiteChain(dir, chain string) error {
	want, err := os.ReadFile(chain)
	if err != nil {
		return fmt.Errorf("copy the chain into the suite: %w", err)
	}
	path := filepath.Join(dir, "chain.yaml")
	for range 2 {
		have, err := os.ReadFile(path)
		if err == nil {
			if !bytes.Equal(have, want) {
				return fmt.Errorf("%s holds another chain than %s: save into another --save-dir (its goldens are that chain's), or remove it", path, chain)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// CreateNew never replaces a file: a chain.yaml another save
		// wrote meanwhile is compared on the second pass.
		if err := fixture.CreateNew(dir, "chain.yaml", want); !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return fmt.Errorf("%s: neither there nor created", path)
}

// update handles the messages of the commands this pane started;
// handled is false for every other message.
func (l *liveTab) update(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case liveArrivedMsg:
		l.state, l.ok = "live", true
		if l.missed > 0 {
			l.state = fmt.Sprintf("live (fell behind and reconnected: %d events missed; exchanges still in serve's ring re-read)", l.missed)
		}
		l.add(msg.sums)
		return waitLive(l.ch), true
	case liveMissedMsg:
		l.missed += msg.n
		l.state, l.ok = fmt.Sprintf("live (fell behind and reconnected: %d events missed; exchanges still in serve's ring re-read)", l.missed), true
		return waitLive(l.ch), true
	case liveEndMsg:
		l.state, l.ok = "disconnected: "+oneLine(msg.err.Error())+" (r reconnects)", false
		return nil, true
	case tea.MouseWheelMsg, tea.MouseClickMsg:
		return nil, true // the list follows the keys only
	case liveOpenMsg:
		m.busy = ""
		if msg.err != nil {
			m.setErr(msg.err)
			return nil, true
		}
		termsafe.Fields(msg.run)
		m.tr.setRun(msg.run)
		m.tab = tabTrace
		m.setInfo(msg.run.Fixture + ": " + msg.run.Outcome.Kind.String())
		return nil, true
	case liveSavedMsg:
		m.busy = ""
		if msg.err != nil {
			m.setErr(msg.err)
			return nil, true
		}
		if msg.golden == "" {
			m.setInfo("saved " + msg.path + "; dry-run it: abctl dryrun --chain CHAIN " + msg.path)
			return nil, true
		}
		// The command first: the status bar has one line, cut at the
		// terminal's width, and the command must be whole on it.
		dir := filepath.Dir(msg.path)
		m.setInfo(fmt.Sprintf("saved; test: abctl replay %s (%s + golden + chain.yaml)", dir, filepath.Base(msg.path)))
		return nil, true
	}
	return nil, false
}

func (l *liveTab) typing() bool { return l.filtering }

func (l *liveTab) hints(k KeyMap) []key.Binding {
	if l.filtering {
		return []key.Binding{withHelp(k.Enter, "enter", "keep filter"), withHelp(k.Back, "esc", "clear"), k.Force}
	}
	return []key.Binding{withHelp(k.Down, "j/k", "move"), withHelp(k.Enter, "enter", "trace"), withHelp(k.Pause, "space", "pause"), k.Filter, withHelp(k.Save, "s", "save fixture"), k.Help, k.Quit}
}

// attach (re)connects the tab to serve's event stream; nil when not
// attached.
func (l *liveTab) attach() tea.Cmd {
	if l.base == "" {
		return nil
	}
	l.close()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan tea.Msg, 64)
	l.ch, l.cancel = ch, cancel
	l.state, l.ok = "connecting", true
	go liveConnect(ctx, l.base, ch)
	return waitLive(ch)
}

// waitLive delivers the Live tab's next message; update re-arms it.
func waitLive(ch chan tea.Msg) tea.Cmd {
	return func() tea.Msg { return <-ch }
}

// close stops the connection.
func (l *liveTab) close() {
	if l.cancel != nil {
		l.cancel()
	}
}

// keys handles the Live tab's keys.
func (l *liveTab) keys(m *Model, msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if l.filtering {
		l.filterKey(m, msg)
		return nil
	}
	switch {
	case key.Matches(msg, k.Reload):
		return l.attach()
	case key.Matches(msg, k.Filter):
		l.filtering = true
		l.edit.set(l.filter)
	case key.Matches(msg, k.Back):
		l.filter = ""
	case key.Matches(msg, k.Pause):
		l.togglePause()
	case key.Matches(msg, k.Enter):
		if s, ok := l.selected(); ok {
			m.busy = fmt.Sprintf("opening exchange %d", s.ID)
			return openLive(l.base, s.ID)
		}
	case key.Matches(msg, k.Save):
		if s, ok := l.selected(); ok {
			dir := m.opts.SaveDir
			if dir == "" {
				dir = "."
			}
			m.busy = fmt.Sprintf("saving exchange %d", s.ID)
			return saveLive(l.base, dir, m.opts.ChainPath, s)
		}
	default:
		l.cursor = moveCursor(msg, k, l.cursor, len(l.shown()), l.h-2)
	}
	return nil
}

// filterKey edits the Live tab's / filter.
func (l *liveTab) filterKey(m *Model, msg tea.KeyPressMsg) {
	switch {
	case key.Matches(msg, m.keys.Enter):
		l.filtering = false
	case key.Matches(msg, m.keys.Back):
		l.filtering, l.filter = false, ""
	default:
		l.edit.edit(msg)
		l.filter = l.edit.value()
	}
	l.cursor = 0
}
