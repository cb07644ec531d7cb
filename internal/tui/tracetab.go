package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/sse"
)

// traceTab is the Trace tab: pick a fixture, dry-run it, step through the
// timeline of hook calls.
type traceTab struct {
	paneSize
	fixtures []Exchange
	pick     int
	pickOff  int
	pickTop  int // body row of the first fixture, for clicks
	// pickRows and stepRows are how many fixtures and steps the last
	// render showed: a page for pgup/pgdn.
	pickRows, stepRows int

	run     *Run
	err     string // why the last dry-run failed, shown over the fixtures
	picking bool   // showing the fixture list over a finished run
	cursor  int
	off     int
	playing bool
	playID  int

	// prompt is '/' (search) or ':' (go to step) while a query is typed
	// into input; 0 otherwise. query is the last search, which an empty
	// search repeats.
	prompt byte
	input  field
	query  string
	// detailOff is the first line of the step's detail shown (J/K); it
	// resets when the cursor moves.
	detailOff int
}

// Messages of the Trace tab's commands: a dry-run's result, a play tick.
type (
	runMsg struct {
		run *Run
		err error
	}
	playMsg struct{ id int }
)

// matches reports whether step i mentions q (lower case): its plugin,
// hook, action, reason, error or the text of its frame.
func (t *traceTab) matches(i int, q string) bool {
	e := t.run.Events[i]
	hay := []string{e.Plugin, e.Hook, e.Action, e.Reason, e.Error, e.Mutated, e.HeaderSummary()}
	if e.Frame != nil && *e.Frame >= 0 && *e.Frame < len(t.run.Frames) {
		hay = append(hay, string(t.run.Frames[*e.Frame]))
	}
	for _, h := range hay {
		if strings.Contains(strings.ToLower(h), q) {
			return true
		}
	}
	return false
}

// search moves to the next step after the cursor that matches q, wrapping
// around to the first; it reports whether one does.
func (t *traceTab) search(q string) bool {
	q = strings.ToLower(q)
	n := len(t.run.Events)
	for d := 1; d <= n; d++ {
		if i := (t.cursor + d) % n; t.matches(i, q) {
			t.cursor = i
			return true
		}
	}
	return false
}

func (t *traceTab) setRun(r *Run) {
	t.run, t.picking, t.cursor, t.off, t.playing, t.err = r, false, 0, 0, false, ""
}

// clear drops the last run: its chain changed.
func (t *traceTab) clear() {
	t.run, t.picking, t.cursor, t.off, t.playing = nil, false, 0, 0, false
}

// step moves the cursor by d and reports whether it moved.
func (t *traceTab) step(d int) bool {
	if t.run == nil {
		return false
	}
	n := clamp(t.cursor+d, len(t.run.Events))
	moved := n != t.cursor
	t.cursor = n
	return moved
}

// seek moves to the first step after the cursor that ok accepts.
func (t *traceTab) seek(ok func(int) bool) bool {
	for i := t.cursor + 1; i < len(t.run.Events); i++ {
		if ok(i) {
			t.cursor = i
			return true
		}
	}
	return false
}

func (t *traceTab) view(w, h int, th theme) []string {
	if t.run == nil || t.picking {
		return t.pickView(w, h, th)
	}
	if w >= wideWidth {
		lw, rw := traceSplit(w)
		return sideBySide(t.timelineView(lw, h, th), t.eventView(rw, h, th), lw, rw, " │ ")
	}
	lh := max(h/2, 3)
	out := pad(t.timelineView(w, lh, th), lh)
	out = append(out, th.dim.Render(strings.Repeat("─", w)))
	return append(out, t.eventView(w, h-lh-1, th)...)
}

func (t *traceTab) pickView(w, h int, th theme) []string {
	out := []string{th.title.Render(fit("  Choose a fixture; enter dry-runs it through the loaded chain", w))}
	if len(t.fixtures) == 0 {
		return append(out, fit("  no fixtures: start abctl ui with --fixtures DIR", w))
	}
	if t.err != "" {
		// The status bar cuts long errors; the pane has room for all of it.
		out = append(out, wrap(th.bad.Render("  dry-run failed: ")+t.err, w, 4)...)
		out = append(out, "")
	}
	rows := h - len(out)
	t.pickTop, t.pickRows = len(out), rows
	t.pick = clamp(t.pick, len(t.fixtures))
	t.pickOff = window(t.pick, t.pickOff, rows, len(t.fixtures))
	for i := t.pickOff; i < len(t.fixtures) && i < t.pickOff+rows; i++ {
		x := &t.fixtures[i]
		mark := "  "
		if i == t.pick {
			mark = "> "
		}
		line := fit(mark+fit(x.Name, 24)+" "+fit(x.direction().String(), 9)+" "+x.Note, w)
		if i == t.pick {
			line = th.sel.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// timelineView renders only the rows that fit: its cost does not depend on
// the trace's length.
func (t *traceTab) timelineView(w, h int, th theme) []string {
	evs := t.run.Events
	out := make([]string, 0, h)
	out = append(out, th.title.Render(fit(fmt.Sprintf("  %s  %d calls  %s", t.run.Fixture, len(evs), t.playState()), w)))
	rows := h - 1
	t.stepRows = rows
	t.off = window(t.cursor, t.off, rows, len(evs))
	for i := t.off; i < len(evs) && i < t.off+rows; i++ {
		e := &evs[i]
		mark := "  "
		if i == t.cursor {
			mark = "> "
		}
		frame := ""
		if e.Frame != nil {
			frame = "f" + strconv.Itoa(*e.Frame)
			if e.Last {
				frame += " last"
			}
		}
		// Short hook names keep the action visible at 80 columns.
		hook := strings.Replace(strings.TrimPrefix(e.Hook, "on_"), "response_frame", "frame", 1)
		line := fit(fmt.Sprintf("%s%5d %-8s %-16s %-7s %s", mark, e.Seq, hook, e.Plugin, frame, e.Action), w)
		switch {
		case i == t.cursor:
			line = th.sel.Render(line)
		case e.Action == "reject" || e.Action == "error":
			line = th.bad.Render(line)
		case e.Mutated != "":
			line = th.warn.Render(line)
		}
		out = append(out, line)
	}
	return out
}

func (t *traceTab) playState() string {
	if t.playing {
		return "▶ playing"
	}
	return "⏸ paused"
}

// eventView shows the event under the cursor: its fields, the frame's raw
// bytes and parsed SSE fields, a body diff where it changed a body, and the
// exchange's outcome.
func (t *traceTab) eventView(w, h int, th theme) []string {
	if len(t.run.Events) == 0 {
		return []string{"no hook calls were recorded"}
	}
	e := &t.run.Events[t.cursor]
	var out []string
	add := func(label, value string) {
		if value != "" {
			out = append(out, wrap(th.dim.Render(fit(label, 9))+value, w, 9)...)
		}
	}
	out = append(out, th.accent.Render(fmt.Sprintf("step %d/%d", t.cursor+1, len(t.run.Events)))+" "+e.Hook+" "+e.Plugin)
	action := e.Action
	if e.Action == "reject" || e.Action == "error" {
		action = th.bad.Render(action)
	}
	add("action", action)
	add("family", string(e.Family)+" "+e.Direction)
	if e.Status != 0 {
		add("status", strconv.Itoa(e.Status))
	}
	add("reason", e.Reason)
	add("error", e.Error)
	if e.Shadow {
		add("shadow", "yes (on_error: observe, the chain went on)")
	}
	add("mutated", e.Mutated)
	for _, hc := range e.Headers {
		add("header", hc.String())
	}
	add("rejects", e.Rejection.String())
	// What the step left in the extensions; the frame it saw follows.
	for _, x := range e.Extensions {
		out = append(out, extensionLines(x, w, th)...)
	}
	if e.DurationNS > 0 {
		add("took", time.Duration(e.DurationNS).String())
	}
	if e.Frame != nil {
		out = append(out, t.frameLines(e, w, th)...)
	}
	switch e.Mutated {
	case trace.MutatedRequestBody:
		out = append(out, diffLines("request body", t.run.ReqBefore, t.run.ReqAfter, w, th)...)
	case trace.MutatedResponseBody:
		out = append(out, diffLines("response body", t.run.RespBefore, t.run.RespAfter, w, th)...)
	}
	o := t.run.Outcome
	res := th.good.Render(o.Kind.String())
	if o.Kind.String() != "allow" {
		res = th.bad.Render(o.Kind.String())
	}
	if o.DeniedBy != "" {
		res += " by " + o.DeniedBy
	}
	res += fmt.Sprintf(", client status %d", t.run.Status)
	if o.Reason != "" {
		res += ": " + o.Reason
	}
	tail := wrap(th.dim.Render(fit("outcome", 9))+res, w, 9)
	for _, wn := range t.run.Warnings {
		tail = append(tail, wrap(th.warn.Render("warning: ")+wn, w, 9)...)
	}
	// The outcome stays visible at the bottom however long the frame is;
	// J/K scroll what does not fit.
	room := max(h-len(tail), 1)
	if len(out) > room {
		t.detailOff = max(min(t.detailOff, len(out)-room), 0)
		rest := len(out) - t.detailOff
		out = out[t.detailOff:]
		if rest > room {
			out = append(out[:room-1:room-1], th.dim.Render(fmt.Sprintf("  ↓ %d more line(s): J/K scroll", rest-room+1)))
		}
	} else {
		t.detailOff = 0
	}
	for len(out) < room {
		out = append(out, "")
	}
	out = append(out, tail...)
	if len(out) > h {
		out = out[:h]
	}
	return out
}

// extensionLines shows one extension the step set or removed: what a
// parser extracted, indented JSON (credentials were redacted when the
// trace was recorded), or why the host refused it.
func extensionLines(x trace.ExtensionDelta, w int, th theme) []string {
	label := th.dim.Render(fit("ext", 9))
	key := termsafe.Line(x.Key)
	switch {
	case x.Refused != "":
		return wrap(label+key+" "+th.bad.Render("refused")+": "+termsafe.Line(x.Refused), w, 9)
	case x.Removed:
		return wrap(label+key+" removed", w, 9)
	}
	out := wrap(label+key+" set", w, 9)
	var pretty bytes.Buffer
	if json.Indent(&pretty, x.Value, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(x.Value)
	}
	for _, l := range strings.Split(pretty.String(), "\n") {
		out = append(out, wrap("  "+termsafe.Line(l), w, 4)...)
	}
	return out
}

func (t *traceTab) frameLines(e *trace.Event, w int, th theme) []string {
	var raw []byte
	i := *e.Frame
	switch {
	case t.run.Frames == nil:
		raw = t.run.RespBefore
		out := []string{th.dim.Render("frame    ") + "whole body (buffered response, one call)"}
		return append(out, quoted(raw, w)...)
	case i < len(t.run.Frames):
		raw = t.run.Frames[i]
	default:
		return []string{th.dim.Render("frame    ") + "closing call (last=true, no bytes)"}
	}
	out := []string{th.dim.Render("frame    ") + fmt.Sprintf("%d, %d bytes", i, len(raw))}
	out = append(out, quoted(raw, w)...)
	ev := sse.Parse(raw)
	if ev.Event != "" {
		out = append(out, th.dim.Render("  event  ")+ev.Event)
	}
	if ev.HasID {
		out = append(out, th.dim.Render("  id     ")+ev.ID)
	}
	if ev.HasRetry {
		out = append(out, th.dim.Render("  retry  ")+strconv.Itoa(ev.Retry))
	}
	if ev.HasData {
		out = append(out, wrap(th.dim.Render("  data   ")+ev.Data, w, 9)...)
	}
	for _, c := range ev.Comments {
		out = append(out, th.dim.Render("  :      ")+c)
	}
	return out
}

// quoted shows raw bytes Go-quoted, one line per line of the input, at
// most n lines.
// quoted shows raw line by line as Go-quoted strings, each wrapped to w
// so the whole text is there for J/K to scroll to; past maxQuoted lines it
// says how many bytes are left rather than build an unbounded view.
func quoted(raw []byte, w int) []string {
	var out []string
	done := 0
	for _, l := range strings.SplitAfter(string(raw), "\n") {
		if l == "" {
			continue
		}
		if len(out) >= maxQuoted {
			out = append(out, fmt.Sprintf("  … %d more bytes", len(raw)-done))
			break
		}
		out = append(out, wrap("  "+strconv.Quote(l), w, 3)...)
		done += len(l)
	}
	return out
}

// maxQuoted bounds the lines of one frame's text in the detail pane.
const maxQuoted = 400

// diffLines shows what changed between before and after: the differing
// middle with some context, after trimming the common prefix and suffix.
// It is cumulative over the whole chain, not per plugin.
func diffLines(what string, before, after []byte, w int, th theme) []string {
	p := 0
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	s := 0
	for s < len(before)-p && s < len(after)-p && before[len(before)-1-s] == after[len(after)-1-s] {
		s++
	}
	const ctx = 16
	cut := func(b []byte) string {
		from, to := max(p-ctx, 0), min(len(b)-s+ctx, len(b))
		str := termsafe.Line(string(b[from:to])) // body bytes from traffic
		if from > 0 {
			str = "…" + str
		}
		if to < len(b) {
			str += "…"
		}
		return str
	}
	out := []string{th.dim.Render("diff     ") + what + " (whole chain)"}
	out = append(out, wrap(th.bad.Render("  - ")+cut(before), w, 4)...)
	return append(out, wrap(th.good.Render("  + ")+cut(after), w, 4)...)
}

// update handles the messages of the commands this pane started;
// handled is false for every other message.
func (t *traceTab) update(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case runMsg:
		m.busy = ""
		if msg.err != nil {
			m.setErr(msg.err)
			var be *pipeline.BuildError
			if errors.As(msg.err, &be) {
				// The chain does not build (a binary plugin rejected its
				// config, say): a trace of it from before misleads.
				t.clear()
			}
			t.err, t.picking = oneLine(msg.err.Error()), true
			return nil, true
		}
		termsafe.Fields(msg.run) // reasons, headers and errors from plugins and traffic
		t.setRun(msg.run)
		m.setInfo("dry-run of " + msg.run.Fixture + ": " + msg.run.Outcome.Kind.String())
		return nil, true
	case playMsg:
		if !t.playing || msg.id != t.playID {
			return nil, true
		}
		if !t.step(1) {
			t.playing = false
			return nil, true
		}
		return t.playTick(), true
	case tea.MouseWheelMsg:
		if t.run == nil || t.picking {
			t.pick = clamp(t.pick+wheelDelta(msg), len(t.fixtures))
		} else {
			t.step(wheelDelta(msg))
		}
		return nil, true
	case tea.MouseClickMsg:
		row := msg.Y - 1 // body row
		if t.run == nil || t.picking {
			if top := max(t.pickTop, 1); row >= top {
				t.pick = clamp(t.pickOff+row-top, len(t.fixtures))
			}
		} else if lw, _ := traceSplit(t.w); inList(msg, t.w, t.h, lw) {
			t.cursor = clamp(t.off+row-1, len(t.run.Events))
		}
		return nil, true
	}
	return nil, false
}

func (t *traceTab) typing() bool { return t.prompt != 0 }

func (t *traceTab) hints(k KeyMap) []key.Binding {
	if t.run == nil || t.picking {
		return []key.Binding{withHelp(k.Down, "j/k", "choose"), withHelp(k.Enter, "enter", "dry-run"), k.NextTab, k.Help, k.Quit}
	}
	return []key.Binding{withHelp(k.NextStep, "n/p", "step"), withHelp(k.NextFrame, "f", "frame"), withHelp(k.NextRej, "x", "reject"), withHelp(k.End, "G", "end"), withHelp(k.Play, "space", "play"), withHelp(k.Back, "esc", "fixtures"), k.Help, k.Quit}
}

// setFixtures replaces the fixtures offered (r rereads them).
func (t *traceTab) setFixtures(xs []Exchange) {
	t.fixtures, t.pick = xs, clamp(t.pick, len(xs))
}

func (t *traceTab) playTick() tea.Cmd {
	id := t.playID
	return tea.Tick(150*time.Millisecond, func(time.Time) tea.Msg { return playMsg{id: id} })
}

// keys handles the Trace tab's keys.
func (t *traceTab) keys(m *Model, msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if t.prompt != 0 {
		t.promptKey(m, msg) // q, r, digits are text while a query is typed
		return nil
	}
	if key.Matches(msg, k.Reload) {
		return m.reload()
	}
	if t.run == nil || t.picking {
		switch {
		case key.Matches(msg, k.Enter):
			return m.dryRun()
		case key.Matches(msg, k.Back):
			if t.run != nil {
				t.picking = false
			}
		default:
			t.pick = moveCursor(msg, k, t.pick, len(t.fixtures), shown(t.pickRows, t.h))
		}
		return nil
	}
	before := t.cursor
	defer func() {
		if t.cursor != before {
			t.detailOff = 0
		}
	}()
	switch {
	case key.Matches(msg, k.DetailDown):
		t.detailOff++
	case key.Matches(msg, k.DetailUp):
		t.detailOff = max(t.detailOff-1, 0)
	case key.Matches(msg, k.Copy):
		b, err := json.Marshal(t.run.Events[t.cursor])
		if err != nil {
			m.setErr(err)
			return nil
		}
		m.setInfo(fmt.Sprintf("copied step %d as JSON (%d bytes) to the clipboard", t.cursor+1, len(b)))
		return tea.SetClipboard(string(b))
	case key.Matches(msg, k.Search), key.Matches(msg, k.GoTo):
		t.prompt, t.playing = msg.String()[0], false
		t.input.set("")
		m.setInfo(string(t.prompt))
	case key.Matches(msg, k.Back):
		t.picking, t.playing = true, false
	case key.Matches(msg, k.Enter):
		return m.dryRun()
	case key.Matches(msg, k.Play):
		t.playing = !t.playing
		t.playID++
		if t.playing {
			if t.cursor == len(t.run.Events)-1 {
				t.cursor = 0
			}
			return t.playTick()
		}
	case key.Matches(msg, k.NextStep):
		t.step(1)
	case key.Matches(msg, k.PrevStep):
		t.step(-1)
	case key.Matches(msg, k.NextFrame):
		t.seek(func(i int) bool { return t.run.Events[i].Frame != nil })
	case key.Matches(msg, k.NextRej):
		if !t.seek(func(i int) bool { a := t.run.Events[i].Action; return a == "reject" || a == "error" }) {
			m.setInfo("no reject after this step")
		}
	case key.Matches(msg, k.End):
		t.cursor = len(t.run.Events) - 1
	default:
		t.cursor = moveCursor(msg, k, t.cursor, len(t.run.Events), shown(t.stepRows, t.h))
	}
	return nil
}

// promptKey edits the Trace tab's / or : query; enter applies it, esc
// drops it.
func (t *traceTab) promptKey(m *Model, msg tea.KeyPressMsg) {
	switch msg.String() {
	case "esc":
		t.prompt = 0
		t.input.set("")
		m.setInfo("")
		return
	case "enter":
		p, in := t.prompt, strings.TrimSpace(t.input.value())
		t.prompt = 0
		t.input.set("")
		if p == ':' {
			n, err := strconv.Atoi(in)
			if err != nil || n < 1 || n > len(t.run.Events) {
				m.setErr(constErr(fmt.Sprintf("no step %q: give a number from 1 to %d", in, len(t.run.Events))))
				return
			}
			t.cursor = n - 1
			m.setInfo(fmt.Sprintf("went to step %d", n))
			return
		}
		if in == "" {
			in = t.query
		}
		if in == "" {
			m.setInfo("")
			return
		}
		t.query = in
		if !t.search(in) {
			m.setErr(constErr(fmt.Sprintf("no step mentions %q", in)))
			return
		}
		m.setInfo(fmt.Sprintf("found %q at step %d", in, t.cursor+1))
		return
	default:
		t.input.edit(msg)
	}
	m.setInfo(string(t.prompt) + t.input.value())
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
		fs, release, err := withPlugins(ctx, cf, x.direction(), fs, cat, plugins)
		if release != nil {
			defer release()
		}
		if err != nil {
			return runMsg{err: err}
		}
		r, err := DryRun(ctx, cf, fs, x)
		return runMsg{run: r, err: err}
	}
	return tea.Batch(run, m.spin.Tick)
}

// withPlugins adds to fs, through plugins (Options.Plugins), the plugins
// of cf's dir chain that fs lacks, and those whose entry says source: dir,
// which replace the built-in of their name (docs/chains.md).
func withPlugins(ctx context.Context, cf *catalog.ChainFile, dir gateway.Direction, fs []gateway.Factory, cat *catalog.Catalog,
	plugins func(context.Context, *catalog.Catalog, []string) ([]gateway.Factory, func(), error)) ([]gateway.Factory, func(), error) {
	if cf == nil {
		return fs, nil, nil
	}
	missing, fromDir := missingPlugins(cf, dir, fs)
	if len(missing) == 0 {
		return fs, nil, nil
	}
	var more []gateway.Factory
	var release func()
	if plugins != nil {
		var err error
		if more, release, err = plugins(ctx, cat, missing); err != nil {
			return nil, release, err
		}
	}
	for _, name := range fromDir {
		if !slices.ContainsFunc(more, func(f gateway.Factory) bool { return f.Name == name }) {
			return nil, release, fmt.Errorf("chain entry %q says source: dir, and no plugin binary of that name was found: start abctl ui with --plugin-dir DIR, or leave source out", name)
		}
	}
	fs = slices.DeleteFunc(slices.Clone(fs), func(f gateway.Factory) bool { return slices.Contains(fromDir, f.Name) })
	return append(fs, more...), release, nil
}

// missingPlugins returns the names of the active entries of cf's dir chain
// that no factory of fs makes or whose source: is dir, each once, in chain
// order; fromDir are those of them with source: dir.
func missingPlugins(cf *catalog.ChainFile, dir gateway.Direction, fs []gateway.Factory) (missing, fromDir []string) {
	for _, e := range cf.Direction(dir) {
		if e.OnError == "off" || slices.Contains(missing, e.Name) {
			continue
		}
		switch {
		case e.Source == catalog.SourceDir:
			fromDir = append(fromDir, e.Name)
		case e.Source == catalog.SourceBuiltin,
			slices.ContainsFunc(fs, func(f gateway.Factory) bool { return f.Name == e.Name }):
			continue
		}
		missing = append(missing, e.Name)
	}
	return missing, fromDir
}
