package tui

import (
	"fmt"
	"os"
	"testing"
	"time"

	"bytes"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"strings"
)

// TestGoldenViews compares the rendered screen with testdata at the three
// sizes the issue names, through the ASCII colour profile.
func TestGoldenViews(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 40}, {60, 20}}
	states := []struct {
		name string
		keys []tea.KeyPressMsg
	}{
		{"catalog", nil},
		{"detail", append(typed("/guard"), k("enter"), k("enter"))},
		{"chain", []tea.KeyPressMsg{k("2")}},
		{"trace-reject", []tea.KeyPressMsg{k("3"), k("j"), k("enter"), k("x")}},
		{"help", []tea.KeyPressMsg{k("?")}},
	}
	for _, sz := range sizes {
		for _, st := range states {
			name := fmt.Sprintf("%s-%dx%d.golden", st.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				m := loaded(t, testOptions(t), sz[0], sz[1])
				press(t, m, st.keys...)
				// Durations differ per run; the golden shows none.
				if m.tr.run != nil {
					for i := range m.tr.run.Events {
						m.tr.run.Events[i].DurationNS = 0
					}
				}
				golden(t, name, ascii(t, m))
			})
		}
	}
	t.Run("too-small", func(t *testing.T) {
		m := loaded(t, testOptions(t), 50, 15)
		golden(t, "too-small-50x15.golden", ascii(t, m))
	})
}

func TestKeysDoc(t *testing.T) {
	got := DefaultKeyMap().Markdown()
	const p = "../../docs/keys.md"
	if updating() {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil || string(want) != got {
		t.Fatalf("docs/keys.md is stale or missing (%v); run go test ./internal/tui -run TestKeysDoc -update", err)
	}
}

// TestEndToEnd drives the real Bubble Tea program: filter the catalog,
// open a plugin, dry-run a fixture and step to the last call.
func TestEndToEnd(t *testing.T) {
	m := New(testOptions(t))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	// The chain loads after the catalog; the dry-run below needs it (at
	// load 14 the keys once overtook it: "no chain loaded").
	waitFor(t, tm, "chain ok")
	tm.Type("/pii")
	tm.Send(k("enter"))
	tm.Send(k("enter"))
	waitFor(t, tm, "redact array") // the detail pane
	tm.Send(k("3"))
	waitFor(t, tm, "Choose a fixture")
	tm.Send(k("j"))
	tm.Send(k("enter"))
	waitFor(t, tm, "11 calls") // the dry-run finished
	tm.Send(k("G"))
	tm.Send(k("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if fm.cat.filter != "pii" || fm.cat.selected().Name != "pii-redactor" {
		t.Errorf("final catalog state: filter %q, selected %v", fm.cat.filter, fm.cat.selected())
	}
	if r := fm.tr.run; r == nil || fm.tr.cursor != len(r.Events)-1 {
		t.Errorf("final trace state: %+v cursor %d", r, fm.tr.cursor)
	}
}

func waitFor(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains([]byte(ansi.Strip(string(b))), []byte(s)) || strings.Contains(string(b), s)
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}
