package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestFieldEditsAtTheCursor: the catalog filter is a text input, driven
// through the real program: ← and home move the cursor, typing inserts
// there, ctrl+w deletes the word before it. (Frames redraw only the cells
// that change, so the edits are checked on the final model, and the bar
// drawn at the cursor by TestFieldZero.)
func TestFieldEditsAtTheCursor(t *testing.T) {
	tm := program(t)
	tm.Type("/ii")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyHome})
	tm.Type("p") // p▏ii
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

// TestFieldZero: a field nobody set is empty and edits at once; its view
// draws the bar at the cursor.
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
	f.edit(tea.KeyPressMsg{Code: tea.KeyHome})
	f.edit(k("x"))
	if f.view() != "x▏ab c" {
		t.Errorf("x typed at the start: %q", f.view())
	}
}
