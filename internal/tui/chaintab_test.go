package tui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// selection returns the body rows drawn in reverse video (the selection
// with colour off), stripped of escapes, and whether they are contiguous.
func selection(t *testing.T, m *Model) (rows []string, first int, contiguous bool) {
	t.Helper()
	lines := strings.Split(ascii(t, m), "\n")
	first, last := -1, -1
	for i := 1; i < len(lines)-2; i++ { // body rows: after the tab bar, before status and footer
		if strings.Contains(lines[i], "\x1b[7m") {
			if first < 0 {
				first = i
			}
			last = i
			rows = append(rows, ansi.Strip(lines[i]))
		}
	}
	return rows, first, first >= 0 && last-first+1 == len(rows)
}

// words joins s's words with single spaces, so text wrapped over several
// rows compares equal to the unwrapped text.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestChainWrapsFindings checks that a P6 finding longer than the screen is
// shown whole (rule ID, message with the registered names, fix) under its
// entry at 80 and 100 columns, that the cursor moves entry by entry with
// the entry and its findings highlighted together, and that scrolling keeps
// the whole selection on screen. P6, C2.
func TestChainWrapsFindings(t *testing.T) {
	// everything.yaml: five unknown chain entries (P6), two extensions
	// that are not in the catalog (C2, listed under "other findings").
	want := []string{"tool-allowlist", "request-rewriter", "nope", "header-tagger", "frame-watcher",
		"search-owner", "secret-guard", // extensions, dispatch order (required first)
		"secret-guard", "search-owner"} // other findings, by line
	for _, w := range []int{80, 100} {
		t.Run(itoa(w), func(t *testing.T) {
			opts := testOptions(t)
			opts.Colour = false
			opts.ChainPath = "../catalog/testdata/chains/everything.yaml"
			m := loaded(t, opts, w, 24)
			press(t, m, k("2"))
			if len(m.chain.findings) != 7 {
				t.Fatalf("want 7 findings, got %d", len(m.chain.findings))
			}
			long := false
			for _, f := range m.chain.findings {
				long = long || len(f.Rule+" "+f.Msg) > w
			}
			if !long {
				t.Fatalf("no finding is longer than %d columns; the test proves nothing", w)
			}
			if s := plain(m); !strings.Contains(s, "mode waypoint") {
				t.Errorf("file header not shown above the first entry:\n%s", s)
			}
			// The findings to see with each selection: the item's own.
			seen := map[string]int{}
			for i, name := range want {
				if i > 0 {
					press(t, m, k("j"))
				}
				if got := m.chain.selectedPlugin(); got != name {
					t.Fatalf("after %d×j: selected %q, want %q", i, got, name)
				}
				checkSelectedItem(t, m, name, i, w, seen)
			}
			press(t, m, k("j"))
			if got := m.chain.cursor; got != len(want)-1 {
				t.Errorf("j past the last item: cursor %d", got)
			}
			// Back up entry by entry.
			for i := len(want) - 2; i >= 0; i-- {
				press(t, m, k("k"))
				if got := m.chain.selectedPlugin(); got != want[i] {
					t.Fatalf("k to item %d: selected %q, want %q", i, got, want[i])
				}
				if _, _, ok := selection(t, m); !ok {
					t.Fatalf("k to %s: selection not whole on screen:\n%s", want[i], plain(m))
				}
			}
			if s := plain(m); !strings.Contains(s, "mode waypoint") {
				t.Errorf("back at the first entry the file header is off screen:\n%s", s)
			}
			// A click on a wrapped finding row selects its entry; on a
			// header it changes nothing.
			clicked := false
			for y, l := range strings.Split(plain(m), "\n") {
				if strings.Contains(l, `unknown plugin "request-rewriter"`) {
					m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 10, Y: y + 1}) // its continuation
					clicked = true
					break
				}
			}
			if got := m.chain.selectedPlugin(); !clicked || got != "request-rewriter" {
				t.Errorf("click on a continuation row of request-rewriter's finding: selected %q:\n%s", got, plain(m))
			}
			press(t, m, k("g"))
			before := m.chain.cursor
			m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 10, Y: 3}) // the "inbound" header
			if m.chain.cursor != before {
				t.Errorf("click on a header moved the cursor to %d:\n%s", m.chain.cursor, plain(m))
			}
			// A page moves by about a screen of rows, by whole items.
			press(t, m, tea.KeyPressMsg{Code: tea.KeyPgDown})
			if c := m.chain.cursor; c < 2 || c >= len(want)-1 {
				t.Errorf("pgdown from the top: cursor %d", c)
			}
			if _, _, ok := selection(t, m); !ok {
				t.Errorf("pgdown: selection not whole on screen:\n%s", plain(m))
			}
			press(t, m, k("G"))
			if s := plain(m); m.chain.cursor != len(want)-1 || !strings.Contains(s, "other findings") {
				t.Errorf("G: cursor %d, screen:\n%s", m.chain.cursor, s)
			}
		})
	}
}

// checkSelectedItem checks that the selection, item i of the list
// (an entry, or under "other findings" the next unseen finding of
// plugin name), is one block on screen holding the item's findings
// whole at w columns.
func checkSelectedItem(t *testing.T, m *Model, name string, i, w int, seen map[string]int) {
	t.Helper()
	rows, first, ok := selection(t, m)
	if !ok || len(rows) == 0 {
		t.Fatalf("%s: selection not one contiguous block on screen:\n%s", name, plain(m))
	}
	if !strings.HasPrefix(rows[0], "> ") {
		t.Errorf("%s: first selected row %q lacks the > mark", name, rows[0])
	}
	sel := words(strings.Join(rows, " "))
	if strings.Contains(sel, "…") {
		t.Errorf("%s: selection cut with …: %q", name, sel)
	}
	if i < 7 && !strings.Contains(sel, name) {
		t.Errorf("%s: entry row not in the selection: %q", name, sel)
	}
	// The selection's findings, whole: in the chain the entry's, under
	// "other findings" the next unseen one for that plugin.
	var fs []int
	for j, f := range m.chain.findings {
		if f.Plugin == name && (f.Rule == "P6" || i >= 7) {
			fs = append(fs, j)
		}
	}
	if i >= 7 {
		fs = fs[seen[name] : seen[name]+1]
		seen[name]++
	}
	for _, j := range fs {
		f := m.chain.findings[j]
		for _, part := range []string{f.Rule + " ", words(f.Msg), "fix: " + words(f.Fix)} {
			if !strings.Contains(sel, part) {
				t.Errorf("%s at %d columns: selection lacks %q:\n%s", name, w, part, strings.Join(rows, "\n"))
			}
		}
		if f.Rule == "P6" && !strings.Contains(sel, "pii-redactor") {
			t.Errorf("%s: P6 finding lost its list of registered names: %q", name, sel)
		}
	}
	if first+len(rows) > 24-2 {
		t.Errorf("%s: selection runs into the status bar", name)
	}
}

// TestChainTabRejectsWhatBuildRejects: a config the plugin's factory (or
// schema) rejects is a finding in the Chain tab, as in `abctl chain
// validate`, not "valid".
func TestChainTabRejectsWhatBuildRejects(t *testing.T) {
	path := t.TempDir() + "/chain.yaml"
	src := "outbound:\n  - name: inference-parser\n  - name: guardrail\n    config:\n      check: respnse\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t)
	opts.ChainPath = path
	m := loaded(t, opts, 120, 40)
	press(t, m, k("2"))
	view := plain(m)
	if len(m.chain.findings) == 0 || !strings.Contains(view, `did you mean "response"`) && !strings.Contains(view, "respnse") {
		t.Fatalf("chain tab findings %v; view:\n%s", m.chain.findings, view)
	}
}

// TestEntryNumbersMatchErrors drives the real program: the Chain tab
// numbers entries as the chain file lists them (an off entry keeps its
// number), and the dry-run error in the Trace tab names the rejected entry
// by the number the Chain tab shows.
func TestEntryNumbersMatchErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.yaml")
	chain := "inbound:\n  - name: inference-parser\n  - name: pii-redactor\n    on_error: off\n  - name: guardrail\n"
	if err := os.WriteFile(path, []byte(chain), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t)
	opts.ChainPath = path
	tm := teatest.NewTestModel(t, New(opts), teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor(t, tm, "a2a-parser")
	tm.Send(k("2"))
	waitFor(t, tm, "   3  guardrail")
	tm.Send(k("3"))
	waitFor(t, tm, "Choose a fixture")
	tm.Send(k("enter")) // chat-stream-clean, inbound
	waitFor(t, tm, "entry 3 (guardrail)")
	tm.Send(k("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if !strings.Contains(fm.status, "entry 3 (guardrail)") {
		t.Errorf("status %q does not name entry 3", fm.status)
	}
	var shown []string
	for _, l := range fm.chain.lines {
		if l.kind == lkEntry {
			shown = append(shown, strings.Join(strings.Fields(l.text)[:2], " "))
		}
	}
	if want := []string{"1 inference-parser", "2 pii-redactor", "3 guardrail"}; !slices.Equal(shown, want) {
		t.Errorf("Chain tab numbers %q, want %q", shown, want)
	}
}
