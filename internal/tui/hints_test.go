package tui

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// boundKeys are the keys of every binding of km.
func boundKeys(km KeyMap) map[string]bool {
	out := map[string]bool{}
	v := reflect.ValueOf(km)
	for i := range v.NumField() {
		if b, ok := v.Field(i).Interface().(key.Binding); ok {
			for _, s := range b.Keys() {
				out[s] = true
			}
		}
	}
	return out
}

// keyAlias maps how hints spell a key to the key's name in the keymap.
var keyAlias = map[string]string{"pgdn": "pgdown", "←": "left", "→": "right", "↑": "up", "↓": "down", ":N": ":"}

// keyLike reports whether a word of a hint names a key (rather than being
// an ordinary word of the sentence).
func keyLike(s string) bool {
	switch s {
	case "esc", "enter", "tab", "shift+tab", "space", "pgdn", "pgdown", "pgup", "home", "end", "up", "down", "left", "right", ":N":
		return true
	}
	return len([]rune(s)) == 1 || strings.HasPrefix(s, "ctrl+")
}

// hintRes find the keys prose hints name: "press q to quit", "e to fix",
// "(j/k scroll, esc back)", "(r reloads too)", "(? or esc closes)",
// "↓ more (…): j/k, pgdn", "enter dry-runs it".
var hintRes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bpress ([^\s(]+?)[,;.)]?(?:\s|$)`),
	regexp.MustCompile(`(?:^|[\s(;,])([^\s(]+) (?:to|scroll|scrolls|back|clears|closes|reloads|dry-runs|quits|opens)\b`),
	regexp.MustCompile(`\((\S+) or \S+ closes`),
	regexp.MustCompile(`more \([^)]*\): ([^│]+?)\s*$`),
}

// splitKeys splits "j/k" into j and k; "/" is the key itself.
func splitKeys(s string) []string {
	if s == "/" {
		return []string{s}
	}
	return strings.FieldsFunc(s, func(r rune) bool { return r == '/' })
}

// unboundKeys returns the keys that text names in a hint but that no
// binding has.
func unboundKeys(text string, bound map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	// Wrapped sentences are read whole, the "more" line alone.
	lines := append(strings.Split(text, "\n"), strings.Join(strings.Fields(text), " "))
	for _, line := range lines {
		for _, re := range hintRes {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				for _, part := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ' ' }) {
					for _, tok := range splitKeys(part) {
						if !keyLike(tok) {
							continue
						}
						if a, ok := keyAlias[tok]; ok {
							tok = a
						}
						if u := tok + " (in " + strings.TrimSpace(line) + ")"; !bound[tok] && !seen[u] {
							seen[u] = true
							out = append(out, u)
						}
					}
				}
			}
		}
	}
	return out
}

// TestHintsNameBoundKeys walks the TUI through every screen that shows
// hints (each tab, the catalog filter and detail, a chain with a YAML
// error, the fixture picker, a trace, the search and go-to prompts, the
// help screen paged through, the too-small screen) and checks that every
// key a footer hint, the help screen or a sentence on screen names is a
// key the keymap binds.
func TestHintsNameBoundKeys(t *testing.T) {
	bound := boundKeys(DefaultKeyMap())
	if got := unboundKeys("  press z to zap (j/k scroll, esc back)", bound); len(got) != 1 || !strings.HasPrefix(got[0], "z ") {
		t.Fatalf("the hint scanner misses an unbound key: %q", got)
	}
	checked := 0
	check := func(state string, m *Model) {
		t.Helper()
		checked++
		for _, kb := range m.hints() {
			for _, tok := range splitKeys(kb.Help().Key) {
				if a, ok := keyAlias[tok]; ok {
					tok = a
				}
				if !bound[tok] {
					t.Errorf("%s: the footer names %q (%q), which no binding has", state, tok, kb.Help().Key)
				}
			}
		}
		for _, u := range unboundKeys(plain(m), bound) {
			t.Errorf("%s: the screen names an unbound key: %s", state, u)
		}
	}
	for _, size := range [][2]int{{80, 24}, {60, 20}} {
		w, h := size[0], size[1]
		m := loaded(t, testOptions(t), w, h)
		check("catalog", m)
		press(t, m, k("/"))
		press(t, m, typed("zzz")...)
		check("catalog filter, no match", m)
		press(t, m, k("esc"), k("enter"))
		check("catalog detail", m)
		press(t, m, k("esc"), k("2"))
		check("chain", m)
		press(t, m, k("3"))
		check("fixture picker", m)
		press(t, m, k("enter"))
		check("trace", m)
		press(t, m, k("/"))
		check("trace search prompt", m)
		press(t, m, k("esc"), k(":"))
		check("trace go-to prompt", m)
		press(t, m, k("esc"), k("?"))
		for range 12 {
			check("help", m)
			press(t, m, tea.KeyPressMsg{Code: tea.KeyPgDown})
		}
		press(t, m, k("esc"))
		m.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
		check("too small", m)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("inbound:\n  - name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t)
	opts.ChainPath = bad
	m := New(opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(m.loadCatalog()())
	m.Update(m.loadChain()())
	press(t, m, k("2"))
	// The hint is wrapped, not cut off at the window's edge.
	if flat := strings.Join(strings.Fields(plain(m)), " "); !strings.Contains(flat, "Press e to fix it in your editor; it is reloaded when the editor exits (r reloads too).") {
		t.Fatalf("the Chain tab does not show the YAML error's whole hint:\n%s", plain(m))
	}
	check("chain with a YAML error", m)
	if checked < 20 {
		t.Fatalf("only %d screens checked", checked)
	}
}
