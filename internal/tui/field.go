package tui

import (
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// field is the one-line text input of the catalog and live filters and
// the trace's search and go-to prompts. bubbles/textinput does the
// editing (insert at the cursor, backspace, ←/→, home/end, ctrl+w,
// ctrl+u, ctrl+k, paste); the panes draw it in their own lines, so it
// renders as its value with a bar at the cursor. The zero field is empty
// and ready.
type field struct {
	in    textinput.Model
	ready bool
}

func (f *field) init() {
	if f.ready {
		return
	}
	f.in = textinput.New()
	f.in.Prompt = ""
	f.in.SetVirtualCursor(false) // the bar is drawn by view; no blink ticks
	f.in.Focus()
	f.ready = true
}

// set replaces the value and puts the cursor at its end.
func (f *field) set(s string) {
	f.init()
	f.in.SetValue(s)
	f.in.CursorEnd()
}

// value is the text typed.
func (f *field) value() string {
	f.init()
	return f.in.Value()
}

// edit applies a key (or a paste) to the text.
func (f *field) edit(msg tea.Msg) {
	f.init()
	f.in, _ = f.in.Update(msg) // no commands: the cursor does not blink
}

// view is the value with a bar at the cursor.
func (f *field) view() string {
	f.init()
	r := []rune(f.in.Value())
	pos := min(max(f.in.Position(), 0), len(r))
	return string(r[:pos]) + "▏" + string(r[pos:])
}
