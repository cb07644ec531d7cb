package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func TestFilterOpenAndClear(t *testing.T) {
	m := loaded(t, testOptions(t), 80, 24)
	press(t, m, k("/"))
	if !m.cat.filtering {
		t.Fatal("/ did not start filtering")
	}
	press(t, m, typed("pii")...)
	if got := len(m.cat.rows); got != 1 || m.cat.selected().Name != "pii-redactor" {
		t.Fatalf("filter pii: %d rows, selected %v", got, m.cat.selected())
	}
	// q types into the filter rather than quitting.
	press(t, m, k("q"))
	if m.cat.filter != "piiq" || len(m.cat.rows) != 0 {
		t.Fatalf("q while filtering: filter %q, %d rows", m.cat.filter, len(m.cat.rows))
	}
	if !strings.Contains(plain(m), `no plugin matches "piiq"`) {
		t.Error("empty filter result not explained on screen")
	}
	press(t, m, k("backspace"), k("enter"))
	if m.cat.filtering || m.cat.filter != "pii" {
		t.Fatalf("enter keeps the filter: filtering=%v filter=%q", m.cat.filtering, m.cat.filter)
	}
	press(t, m, k("enter"))
	if !m.cat.detail {
		t.Fatal("enter did not open the detail pane")
	}
	if s := plain(m); !strings.Contains(s, "writes response body") {
		t.Errorf("detail pane lacks capabilities:\n%s", s)
	}
	press(t, m, k("G")) // scrolls the detail pane to its end
	if s := plain(m); !strings.Contains(s, "redact array") || m.cat.cursor != 0 {
		t.Errorf("detail pane end lacks the config schema (or G moved the list):\n%s", s)
	}
	press(t, m, k("esc"))
	if m.cat.detail || m.cat.filter != "pii" {
		t.Fatal("first esc should close the detail, not the filter")
	}
	press(t, m, k("esc"))
	if m.cat.filter != "" || len(m.cat.rows) != len(m.cat.c.Plugins) {
		t.Fatal("second esc should clear the filter")
	}
}

func TestListMovement(t *testing.T) {
	m := loaded(t, testOptions(t), 80, 24)
	n := len(m.cat.rows)
	tests := []struct {
		keys []tea.KeyPressMsg
		want int
	}{
		{[]tea.KeyPressMsg{k("j"), k("j")}, 2},
		{[]tea.KeyPressMsg{k("down"), k("k")}, 0},
		{[]tea.KeyPressMsg{k("G")}, n - 1},
		{[]tea.KeyPressMsg{k("G"), k("j")}, n - 1},
		{[]tea.KeyPressMsg{k("G"), k("g")}, 0},
		{[]tea.KeyPressMsg{k("k")}, 0},
	}
	for _, tt := range tests {
		m.cat.cursor = 0
		press(t, m, tt.keys...)
		if m.cat.cursor != tt.want {
			t.Errorf("keys %v: cursor %d, want %d", tt.keys, m.cat.cursor, tt.want)
		}
	}
}

func TestTabsHelpQuit(t *testing.T) {
	m := loaded(t, testOptions(t), 80, 24)
	press(t, m, k("tab"))
	if m.tab != tabChain {
		t.Fatalf("tab: %v", m.tab)
	}
	press(t, m, k("shift+tab"), k("shift+tab"))
	if m.tab != tabTrace {
		t.Fatalf("shift+tab twice from Chain: %v", m.tab)
	}
	press(t, m, k("?"), k("G"))
	if !m.help || !strings.Contains(plain(m), "next reject") {
		t.Fatal("? does not show all keys")
	}
	press(t, m, k("esc"))
	if m.help {
		t.Fatal("esc does not close help")
	}
	if _, cmd := m.Update(k("q")); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q does not quit")
	}
	m.cat.filtering = true
	if _, cmd := m.Update(k("ctrl+c")); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("ctrl+c does not quit while filtering")
	}
}

func TestResizeAndTooSmall(t *testing.T) {
	m := loaded(t, testOptions(t), 120, 40)
	for _, sz := range [][2]int{{120, 40}, {80, 24}, {60, 20}, {200, 50}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		lines := strings.Split(plain(m), "\n")
		if len(lines) != sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		for i, l := range lines {
			if w := ansi.StringWidth(l); w != sz[0] {
				t.Errorf("%dx%d: line %d is %d cells: %q", sz[0], sz[1], i, w, l)
				break
			}
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 59, Height: 30})
	if s := plain(m); !strings.Contains(s, "too small") || !strings.Contains(s, "60×20") {
		t.Errorf("59 columns: %q", s)
	}
	// Narrow: detail below the list; wide: beside it.
	m.Update(tea.WindowSizeMsg{Width: 99, Height: 30})
	if !strings.Contains(plain(m), strings.Repeat("─", 99)) {
		t.Error("at 99 columns the detail pane is not below the list")
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	if !strings.Contains(plain(m), " │ ") {
		t.Error("at 100 columns the detail pane is not beside the list")
	}
}

func TestDryRunStepping(t *testing.T) {
	m := loaded(t, testOptions(t), 120, 40)
	press(t, m, k("3"), k("j"), k("enter")) // chat-stream-reject
	r := m.tr.run
	if r == nil {
		t.Fatalf("no run: %s", m.status)
	}
	if r.Outcome.Kind.String() != "deny" || r.Outcome.DeniedBy != "guardrail" {
		t.Fatalf("outcome %+v", r.Outcome)
	}
	press(t, m, k("x"))
	if e := r.Events[m.tr.cursor]; e.Action != "reject" || e.Plugin != "guardrail" {
		t.Fatalf("x stopped at %+v", e)
	}
	s := plain(m)
	for _, want := range []string{"rm -rf", "event  message", "id     3", "outcome  deny by guardrail", "step "} {
		if !strings.Contains(s, want) {
			t.Errorf("reject step lacks %q:\n%s", want, s)
		}
	}
	press(t, m, k("p"))
	if e := r.Events[m.tr.cursor]; e.Action == "reject" {
		t.Error("p did not step back")
	}
	press(t, m, k("f"))
	if r.Events[m.tr.cursor].Frame == nil {
		t.Error("f did not stop at a frame call")
	}
	press(t, m, k("G"))
	if m.tr.cursor != len(r.Events)-1 || !strings.Contains(plain(m), "step "+itoa(len(r.Events))+"/"+itoa(len(r.Events))) {
		t.Errorf("G: cursor %d of %d", m.tr.cursor, len(r.Events))
	}
	press(t, m, k("n"))
	if m.tr.cursor != len(r.Events)-1 {
		t.Error("n moved past the end")
	}
	press(t, m, k("esc"), k("j"), k("enter")) // chat-pii-redact
	if m.tr.run == r || m.tr.run.Fixture != "chat-pii-redact" {
		t.Fatalf("second run: %+v", m.tr.run)
	}
	for m.tr.run.Events[m.tr.cursor].Mutated == "" && m.tr.step(1) {
	}
	if s := plain(m); !strings.Contains(s, "diff     response body") || !strings.Contains(s, "[REDACTED:email]") {
		t.Errorf("no body diff at the mutating step:\n%s", s)
	}
}

func TestPlayPause(t *testing.T) {
	m := loaded(t, testOptions(t), 80, 24)
	press(t, m, k("3"), k("enter"))
	_, cmd := m.Update(k("space"))
	if !m.tr.playing || cmd == nil {
		t.Fatal("space did not start playing")
	}
	m.Update(playMsg{id: m.tr.playID})
	if m.tr.cursor != 1 {
		t.Fatalf("a play tick should advance one step, cursor %d", m.tr.cursor)
	}
	m.Update(k("space"))
	m.Update(playMsg{id: m.tr.playID - 1})
	if m.tr.playing || m.tr.cursor != 1 {
		t.Fatal("pause did not stop the ticks")
	}
}

func TestChainFindingsAndDrillIn(t *testing.T) {
	opts := testOptions(t)
	opts.ChainPath = "../catalog/testdata/chains/everything.yaml"
	m := loaded(t, opts, 120, 40)
	press(t, m, k("2"))
	s := plain(m)
	for _, want := range []string{"P6", "C2", "unknown plugin", "nope", "fix:"} {
		if !strings.Contains(s, want) {
			t.Errorf("chain tab lacks %q:\n%s", want, s)
		}
	}
	// The example chain: enter on an entry opens it in the catalog.
	m = loaded(t, testOptions(t), 120, 40)
	press(t, m, k("2"))
	for m.chain.selectedPlugin() != "guardrail" {
		press(t, m, k("j"))
	}
	press(t, m, k("enter"))
	if m.tab != tabCatalog || m.cat.selected().Name != "guardrail" || !m.cat.detail {
		t.Fatalf("enter on a chain entry: tab %v, plugin %v", m.tab, m.cat.selected())
	}
	if s := plain(m); !strings.Contains(s, "inference-parser ✓ in chain") {
		t.Errorf("requires not marked satisfied by the chain:\n%s", s)
	}
}

func TestEditRevalidates(t *testing.T) {
	opts := testOptions(t)
	dir := t.TempDir()
	path := dir + "/chain.yaml"
	if err := os.WriteFile(path, ExampleChainYAML(), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.ChainPath = path
	opts.Getenv = func(k string) string {
		if k == "EDITOR" {
			return "true"
		}
		return ""
	}
	m := loaded(t, opts, 80, 24)
	press(t, m, k("2"))
	_, cmd := m.Update(k("e"))
	if cmd == nil {
		t.Fatal("e returned no command")
	}
	// The editor "changed" the file; its exit message reloads it.
	if err := os.WriteFile(path, []byte("outbound:\n  - name: nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, next := m.Update(editedMsg{})
	runCmd(m, next)
	if len(m.chain.findings) == 0 || !strings.Contains(plain(m), "nope") {
		t.Fatalf("chain not revalidated after edit: %d findings", len(m.chain.findings))
	}
	// Without $VISUAL and $EDITOR, e falls back to vi, as git does.
	m.opts.Getenv = func(string) string { return "" }
	if got := m.editorArgs(); len(got) != 1 || got[0] != "vi" {
		t.Errorf("no editor: runs %v, want vi", got)
	}
	if _, cmd := m.Update(k("e")); cmd == nil {
		t.Errorf("no editor: e did nothing; status %q", m.status)
	}
	m.opts.Getenv = func(k string) string {
		return map[string]string{"VISUAL": "code --wait", "EDITOR": "nano"}[k]
	}
	if got := m.editorArgs(); strings.Join(got, " ") != "code --wait" {
		t.Errorf("VISUAL set: runs %v", got)
	}
}

func TestErrorsInStatusBar(t *testing.T) {
	opts := testOptions(t)
	opts.ChainPath = "does-not-exist.yaml"
	m := New(opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(m.loadCatalog()())
	m.Update(m.loadChain()())
	s := plain(m)
	if !strings.Contains(s, "error:") || len(strings.Split(s, "\n")) != 24 {
		t.Errorf("chain read error not in the status bar:\n%s", s)
	}
	press(t, m, k("3"), k("enter"))
	if !strings.Contains(m.status, "no chain loaded") {
		t.Errorf("dry-run without chain: %q", m.status)
	}
}

func TestMouse(t *testing.T) {
	m := loaded(t, testOptions(t), 80, 24)
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.cat.cursor != 2 {
		t.Fatalf("wheel: cursor %d", m.cat.cursor)
	}
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: 3}) // body row 2 = list row 1
	if m.cat.cursor != 1 {
		t.Fatalf("click on row: cursor %d", m.cat.cursor)
	}
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: m.tabBarWidth() - 3, Y: 0})
	if m.tab != tabTrace {
		t.Fatalf("click on the Trace tab: %v", m.tab)
	}
}

func TestNoColour(t *testing.T) {
	opts := testOptions(t)
	opts.Colour = false
	m := loaded(t, opts, 80, 24)
	s := m.Render()
	if strings.Contains(s, "\x1b[3") || strings.Contains(s, "\x1b[38") || strings.Contains(s, "\x1b[4") && strings.Contains(s, "\x1b[48") {
		t.Errorf("colour codes with colour off: %q", s[:200])
	}
	if !strings.Contains(s, "> a2a-parser") {
		t.Error("selection not visible without colour")
	}
	colour := loaded(t, testOptions(t), 80, 24).Render()
	if !strings.Contains(colour, "\x1b[") {
		t.Error("no escape codes with colour on")
	}
}

func TestExampleChainParses(t *testing.T) {
	cf := ExampleChain()
	if len(cf.Inbound) == 0 || len(cf.Outbound) == 0 {
		t.Fatal("example chain should have both directions")
	}
}

// plain is the screen without escape codes.
func plain(m *Model) string { return ansi.Strip(m.Render()) }

// TestReadableAt100To120 checks that the wide layout gives the lists the
// room they need: catalog names and descriptions and the trace timeline's
// action column stay readable when the detail pane sits beside them.
func TestReadableAt100To120(t *testing.T) {
	for _, w := range []int{100, 120} {
		m := loaded(t, testOptions(t), w, 30)
		if s := plain(m); !strings.Contains(s, "inference-parser P") || !strings.Contains(s, "Parses A2A task status") {
			t.Errorf("%d columns: catalog list squeezes names or descriptions:\n%s", w, s)
		}
		press(t, m, k("3"), k("j"), k("enter"), k("x"))
		if s := plain(m); !strings.Contains(s, "f2      reject") {
			t.Errorf("%d columns: trace timeline cuts the action column:\n%s", w, s)
		}
		// A click in the list selects the row under the pointer.
		m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 50, Y: 3})
		if m.tr.cursor != 1 {
			t.Errorf("%d columns: click at x=50 on timeline row 2: cursor %d", w, m.tr.cursor)
		}
	}
}

// TestBarsAt80 checks the bottom rows at 80 columns: the footer keeps its
// last key (q quit) in every context, and a long status message never
// runs into the counts without a gap.
func TestBarsAt80(t *testing.T) {
	m := loaded(t, testOptions(t), 80, 24)
	check := func(ctx string) {
		t.Helper()
		lines := strings.Split(plain(m), "\n")
		if foot := lines[len(lines)-1]; !strings.Contains(foot, "q quit") {
			t.Errorf("%s: footer lacks q quit: %q", ctx, foot)
		}
		if bar := lines[len(lines)-2]; strings.Contains(bar, "okchain") || strings.Contains(bar, "11dry") {
			t.Errorf("%s: status message runs into the counts: %q", ctx, bar)
		}
	}
	check("catalog")
	press(t, m, k("2"))
	check("chain")
	press(t, m, k("3"))
	check("fixtures")
	press(t, m, k("j"), k("enter"))
	check("trace")
}

// TestDryRunErrorInPane checks that a dry-run that fails says why in the
// Trace pane, whole, not only in the (cut) status bar, and that the next
// successful run clears it.
func TestDryRunErrorInPane(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "outbound-only.yaml")
	if err := os.WriteFile(p, []byte("outbound:\n  - name: inference-parser\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t)
	opts.ChainPath = p
	m := loaded(t, opts, 80, 24)
	press(t, m, k("3"), k("enter")) // chat-stream-clean is inbound
	if m.tr.run != nil || m.status == "" || m.statusOK {
		t.Fatalf("inbound fixture through an outbound-only chain ran: %q", m.status)
	}
	body := strings.Join(strings.Split(plain(m), "\n")[1:22], " ")
	if !strings.Contains(body, "dry-run failed") || !strings.Contains(strings.Join(strings.Fields(body), " "), "inbound") {
		t.Errorf("the pane does not say why the dry-run failed (%q):\n%s", m.status, plain(m))
	}
	// A click on a fixture row selects that fixture under the error.
	lines := strings.Split(plain(m), "\n")
	for y, l := range lines {
		if strings.Contains(l, "chat-pii-redact") {
			m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: y})
		}
	}
	if m.tr.pick != 2 {
		t.Fatalf("click on chat-pii-redact picked fixture %d", m.tr.pick)
	}
	press(t, m, k("enter")) // chat-pii-redact is outbound
	if m.tr.run == nil {
		t.Fatalf("outbound fixture did not run: %q", m.status)
	}
	press(t, m, k("esc"))
	if strings.Contains(plain(m), "dry-run failed") {
		t.Error("the old error stays after a successful run")
	}
}

// TestHelpScrollsWithoutTruncation: at every size, paging through the help
// screen shows every binding with its whole description, and nothing is
// cut off with an ellipsis. Attached (the Live tab's keys shown), so
// every group is on it; nothing connects, since Init does not run.
func TestHelpScrollsWithoutTruncation(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		opts := testOptions(t)
		opts.Attach = "http://127.0.0.1:9"
		m := loaded(t, opts, size[0], size[1])
		press(t, m, k("?"))
		seen := ""
		for range 20 {
			seen += plain(m) + "\n"
			press(t, m, k("pgdown"))
		}
		// The status bar may abbreviate the chain path; the help may not.
		if strings.Contains(strings.ReplaceAll(seen, "example-chain.yaml…", ""), "…") {
			t.Errorf("%dx%d: help truncates:\n%s", size[0], size[1], seen)
		}
		flat := strings.Join(strings.Fields(seen), " ")
		for _, g := range m.keys.Groups() {
			for _, b := range g.Bindings {
				if d := strings.Join(strings.Fields(b.Help().Desc), " "); !strings.Contains(flat, d) {
					t.Errorf("%dx%d: help never shows %q", size[0], size[1], d)
				}
			}
		}
		press(t, m, k("g"))
		if !strings.Contains(plain(m), "Everywhere") {
			t.Errorf("%dx%d: g does not go back to the top", size[0], size[1])
		}
	}
}
