package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap is the TUI's one keymap. Update matches keys against it, the
// footer and the help screen render it, and docs/keys.md is generated from
// it ([KeyMap.Markdown]), so the three never disagree.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextTab, PrevTab, Tab1, Tab2, Tab3      key.Binding
	Tab4, Pause, Save                       key.Binding
	Enter, Back, Filter, Help, Quit, Force  key.Binding
	Edit, Reload                            key.Binding
	NextStep, PrevStep, NextFrame, NextRej  key.Binding
	End, Play, Search, GoTo                 key.Binding
	DetailDown, DetailUp, Copy              key.Binding
}

// DefaultKeyMap returns abctl's keys.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Up:         b([]string{"k", "up"}, "k/↑", "move up"),
		Down:       b([]string{"j", "down"}, "j/↓", "move down"),
		PageUp:     b([]string{"pgup", "ctrl+u"}, "pgup/ctrl+u", "page up"),
		PageDown:   b([]string{"pgdown", "ctrl+d"}, "pgdn/ctrl+d", "page down"),
		Top:        b([]string{"g", "home"}, "g/home", "go to the top"),
		Bottom:     b([]string{"G", "end"}, "G/end", "go to the bottom"),
		NextTab:    b([]string{"tab"}, "tab", "next tab"),
		PrevTab:    b([]string{"shift+tab"}, "shift+tab", "previous tab"),
		Tab1:       b([]string{"1"}, "1", "Catalog tab"),
		Tab2:       b([]string{"2"}, "2", "Chain tab"),
		Tab3:       b([]string{"3"}, "3", "Trace tab"),
		Tab4:       b([]string{"4"}, "4", "Live tab (abctl ui --attach URL)"),
		Pause:      b([]string{"space"}, "space", "pause / resume the list (new exchanges are counted meanwhile)"),
		Save:       b([]string{"s"}, "s", "save the exchange as a fixture, and with a chain its golden (into --save-dir)"),
		Enter:      b([]string{"enter"}, "enter", "open / drill in / run dry-run"),
		Back:       b([]string{"esc"}, "esc", "back / clear the filter"),
		Filter:     b([]string{"/"}, "/", "filter the catalog"),
		Help:       b([]string{"?"}, "?", "show all keys"),
		Quit:       b([]string{"q"}, "q", "quit (not while filtering)"),
		Force:      b([]string{"ctrl+c"}, "ctrl+c", "quit at once"),
		Edit:       b([]string{"e"}, "e", "edit the chain file in $VISUAL or $EDITOR (vi when unset)"),
		Reload:     b([]string{"r"}, "r", "reload the catalog, chain and fixtures from disk"),
		NextStep:   b([]string{"n", "right", "l"}, "n/→", "next step"),
		PrevStep:   b([]string{"p", "left", "h"}, "p/←", "previous step"),
		NextFrame:  b([]string{"f"}, "f", "next frame"),
		NextRej:    b([]string{"x"}, "x", "next reject"),
		End:        b([]string{"G", "end"}, "G/end", "last step"),
		Play:       b([]string{"space"}, "space", "play / pause"),
		Search:     b([]string{"/"}, "/", "search the steps (plugin, hook, action, reason, frame text); / enter again for the next"),
		GoTo:       b([]string{":"}, ":N", "go to step N"),
		DetailDown: b([]string{"J"}, "J", "scroll the step's detail down"),
		DetailUp:   b([]string{"K"}, "K", "scroll the step's detail up"),
		Copy:       b([]string{"y"}, "y", "copy the step as JSON (OSC 52 clipboard)"),
	}
}

// Group is a titled set of bindings, one per help-screen column.
type Group struct {
	Title    string
	Bindings []key.Binding
}

// Groups returns the bindings by context, in help-screen order.
func (k KeyMap) Groups() []Group {
	return []Group{
		{"Everywhere", []key.Binding{k.NextTab, k.PrevTab, k.Tab1, k.Tab2, k.Tab3, k.Reload, k.Help, k.Quit, k.Force}},
		{"Lists", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Enter, k.Back}},
		{"Catalog", []key.Binding{k.Filter, k.Enter, k.Back}},
		{"Chain", []key.Binding{k.Edit, k.Enter}},
		{"Trace", []key.Binding{k.Enter, k.NextStep, k.PrevStep, k.NextFrame, k.NextRej, k.End, k.Play, k.Search, k.GoTo, k.DetailDown, k.DetailUp, k.Copy, k.Back}},
		{"Live", []key.Binding{k.Tab4, withHelp(k.Enter, "enter", "open the exchange in the Trace tab's stepper"), k.Pause, withHelp(k.Filter, "/", "filter the exchanges (id, method, path, status, outcome, plugin)"), k.Save, withHelp(k.Reload, "r", "reconnect to serve")}},
	}
}

// Markdown renders the keymap as the page docs/keys.md; a test fails when
// the committed page differs.
func (k KeyMap) Markdown() string {
	var b strings.Builder
	b.WriteString("# abctl TUI keys\n\n")
	b.WriteString("Generated from `internal/tui/keymap.go` by `go test ./internal/tui -run TestKeysDoc -update`; do not edit.\n")
	b.WriteString("The same keymap drives the TUI, its footer and its `?` screen.\n")
	for _, g := range k.Groups() {
		fmt.Fprintf(&b, "\n## %s\n\n| key | action |\n|---|---|\n", g.Title)
		for _, kb := range g.Bindings {
			keys := make([]string, len(kb.Keys()))
			for i, s := range kb.Keys() {
				keys[i] = "`" + s + "`"
			}
			fmt.Fprintf(&b, "| %s | %s |\n", strings.Join(keys, ", "), kb.Help().Desc)
		}
	}
	b.WriteString("\n## Mouse\n\n| input | action |\n|---|---|\n")
	b.WriteString("| wheel | move the cursor of the list under the pointer |\n")
	b.WriteString("| click on a tab | switch to that tab |\n")
	b.WriteString("| click on a row | select that row |\n")
	b.WriteString("\n## Capability badges (Catalog)\n\n")
	b.WriteString("Each catalog row carries `FFF bbb BBBB`: families `P` `D` `H`; body `r` reads body, `q` writes request body, `s` writes response body; behaviours `S` streams, `F` finishes, `I` init, `Y` ready. A `·` marks one absent.\n")
	return b.String()
}
