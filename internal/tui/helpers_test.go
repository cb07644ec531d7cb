package tui

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/auditlog"
	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/examples/plugins/piiredactor"
	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/sdk/gateway"
)

// updating reports whether -update was given. The flag itself is defined
// by x/exp/golden, which teatest imports; defining it again would panic.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func testFactories() []gateway.Factory {
	return []gateway.Factory{a2aparser.Factory(), auditlog.Factory(), guardrail.Factory(),
		inferenceparser.Factory(), mcpparser.Factory(), piiredactor.Factory()}
}

func testOptions(t testing.TB) Options {
	fs := testFactories()
	return Options{
		LoadCatalog: func(ctx context.Context) (*catalog.Catalog, error) {
			return catalog.Load(ctx, []string{"builtin"}, catalog.Options{Builtin: func() []catalog.Builtin {
				var out []catalog.Builtin
				for i := range fs {
					out = append(out, catalog.Builtin{Name: fs[i].Name, Pipeline: &fs[i]})
				}
				return out
			}})
		},
		Factories: fs,
		Fixtures:  SampleExchanges(),
		Colour:    true,
		Getenv:    func(string) string { return "" },
	}
}

// loaded returns a model of size w×h with the catalog and chain loaded,
// running the commands Init would run.
func loaded(t testing.TB, opts Options, w, h int) *Model {
	t.Helper()
	m := New(opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(m.loadCatalog()())
	if m.cat.c == nil {
		t.Fatalf("catalog did not load: %s", m.status)
	}
	m.Update(m.loadChain()())
	if m.chain.cf == nil {
		t.Fatalf("chain did not load: %s", m.status)
	}
	return m
}

// program starts the real program on New(testOptions(t)) in a 120×40
// terminal without colour, and waits for the catalog on screen.
func program(t *testing.T) *teatest.TestModel {
	t.Helper()
	tm := teatest.NewTestModel(t, New(testOptions(t)), teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor(t, tm, "a2a-parser")
	return tm
}

// press sends keys; a command the key returns is run and its message fed
// back, as the program would (dry-runs finish before press returns).
func press(t testing.TB, m *Model, keys ...tea.KeyPressMsg) {
	t.Helper()
	for _, k := range keys {
		_, cmd := m.Update(k)
		runCmd(m, cmd)
	}
}

func runCmd(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			if c != nil {
				if r, ok := c().(runMsg); ok {
					m.Update(r)
				}
			}
		}
	case runMsg, chainMsg, catalogMsg:
		_, next := m.Update(msg)
		runCmd(m, next)
	}
}

func k(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func typed(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		out = append(out, k(string(r)))
	}
	return out
}

// ascii renders the view through the ASCII colour profile: colours are
// dropped, attributes (bold, reverse) stay, so goldens are stable.
func ascii(t testing.TB, m *Model) string {
	t.Helper()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.Ascii}
	if _, err := w.WriteString(m.View().Content); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/tui -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, diff)
	}
}
