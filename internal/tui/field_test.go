package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestFieldEditsAtTheCursor: the catalog filter is a text input, driven
// through the real program: ← and home move the cursor, typing inserts
// there, the status bar draws the bar at the cursor, ctrl+w deletes the
// word before it. (Later frames redraw only the cells that change, so the
// edits after the first are checked on the final model.)
func TestFieldEditsAtTheCursor(t *testing.T) {
	tm := program(t)
	tm.Type("/ii")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyHome})
	tm.Type("p")
	waitFor(t, tm, "filter: p▏ii")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnd})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyLeft})
	tm.Send(k("backspace")) // p▏i
	tm.Send(tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl})
	tm.Type("pii")
	tm.Send(k("enter"))
	tm.Send(k("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if fm.cat.filter != "piii" || fm.cat.filtering {
		t.Errorf("filter %q (filtering %v), want piii kept", fm.cat.filter, fm.cat.filtering)
	}
}

// TestFieldZero: a field nobody set is empty and edits at once.
func TestFieldZero(t *testing.T) {
	var f field
	if f.value() != "" || f.view() != "▏" {
		t.Fatalf("zero field: %q %q", f.value(), f.view())
	}
	f.edit(k("a"))
	f.edit(tea.PasteMsg{Content: "b\tc"})
	if f.value() != "ab c" || f.view() != "ab c▏" {
		t.Errorf("after a and a paste: %q %q", f.value(), f.view())
	}
}
