package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/sdk/gateway"
)

// longOptions has a catalog of 40 plugins, 40 fixtures and one fixture of
// 60 frames, so every list is longer than a screen.
func longOptions(t *testing.T) Options {
	opts := testOptions(t)
	base := testFactories()
	opts.LoadCatalog = func(ctx context.Context) (*catalog.Catalog, error) {
		return catalog.Load(ctx, []string{"builtin"}, catalog.Options{Builtin: func() []catalog.Builtin {
			var out []catalog.Builtin
			for i := range base {
				out = append(out, catalog.Builtin{Name: base[i].Name, Pipeline: &base[i]})
			}
			for i := range 34 {
				f := gateway.Factory{Name: fmt.Sprintf("extra-%02d", i), New: base[1].New, Config: base[1].Config}
				out = append(out, catalog.Builtin{Name: f.Name, Pipeline: &f})
			}
			return out
		}})
	}
	long := SampleExchanges()[0]
	long.Name, long.Note, long.Chunks = "chat-stream-long", "60 frames", nil
	for i := range 60 {
		long.Chunks = append(long.Chunks, []byte(delta(fmt.Sprintf("w%d ", i))))
	}
	fx := []Exchange{long}
	for i := range 39 {
		x := SampleExchanges()[0]
		x.Name = fmt.Sprintf("fixture-%02d", i)
		fx = append(fx, x)
	}
	opts.Fixtures = fx
	return opts
}

// selectedRow returns the text of the selected row ("> ") on screen and
// the texts of the rows of that list that were on screen.
func selectedRow(t *testing.T, m *Model) string {
	t.Helper()
	for _, l := range strings.Split(plain(m), "\n") {
		if i := strings.Index(l, "> "); i >= 0 && i < 4 {
			return strings.Fields(l[i+2:])[0]
		}
	}
	t.Fatalf("no selected row on screen:\n%s", plain(m))
	return ""
}

// lastListRow returns the first word of the last list row shown above
// the first row that is not part of the list (a blank, a rule, the status).
func lastListRow(t *testing.T, m *Model, isRow func(string) bool) string {
	t.Helper()
	last := ""
	for _, l := range strings.Split(plain(m), "\n")[1:] { // below the tab bar
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "> "))
		if len(f) > 0 && isRow(f[0]) {
			last = f[0]
		} else if last != "" {
			break
		}
	}
	return last
}

// TestPageKeysMoveByVisiblePage: in the catalog, the fixture picker and
// the trace's steps, at every size, pgdn from the top selects the last
// row that was on screen (a page less the one row kept as context), and
// pgup comes back to the first.
func TestPageKeysMoveByVisiblePage(t *testing.T) {
	pgdn, pgup := tea.KeyPressMsg{Code: tea.KeyPgDown}, tea.KeyPressMsg{Code: tea.KeyPgUp}
	isPlugin := func(s string) bool {
		return strings.HasPrefix(s, "extra-") || strings.HasSuffix(s, "-parser") || strings.Contains(s, "-")
	}
	isFixture := func(s string) bool { return strings.HasPrefix(s, "fixture-") || strings.HasPrefix(s, "chat-stream-") }
	isStep := func(s string) bool { _, err := strconv.Atoi(s); return err == nil }
	for _, size := range [][2]int{{80, 24}, {60, 20}, {120, 40}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		m := loaded(t, longOptions(t), size[0], size[1])
		for _, list := range []struct {
			what  string
			setup []tea.KeyPressMsg
			isRow func(string) bool
		}{
			{"catalog", []tea.KeyPressMsg{k("1")}, isPlugin},
			{"fixture picker", []tea.KeyPressMsg{k("3")}, isFixture},
			{"trace steps", []tea.KeyPressMsg{k("enter")}, isStep},
		} {
			press(t, m, list.setup...)
			first := selectedRow(t, m)
			want := lastListRow(t, m, list.isRow)
			if want == first {
				t.Fatalf("%s %s: the list fits on one screen; the test needs a longer one:\n%s", name, list.what, plain(m))
			}
			press(t, m, pgdn)
			if got := selectedRow(t, m); got != want {
				t.Errorf("%s %s: pgdn from %s selected %s; want %s, the last row that was shown:\n%s", name, list.what, first, got, want, plain(m))
			}
			press(t, m, pgup)
			if got := selectedRow(t, m); got != first {
				t.Errorf("%s %s: pgup came back to %s, want %s", name, list.what, got, first)
			}
		}
	}
}

// TestCatalogDetailPagesByItsHeight: pgdn in the catalog's detail pane
// scrolls by the pane's own height (less one line), not the screen's.
func TestCatalogDetailPagesByItsHeight(t *testing.T) {
	m := loaded(t, longOptions(t), 60, 20) // narrow: the detail pane is the lower half
	press(t, m, k("/"))
	press(t, m, typed("guardrail")...)
	press(t, m, k("enter"), k("enter"))
	plain(m) // the program renders after every key; the pane's height is known then
	if !m.cat.detail || m.cat.detailRows == 0 || m.cat.detailRows >= m.bodyHeight() {
		t.Fatalf("detail pane: focus %v, %d rows of %d", m.cat.detail, m.cat.detailRows, m.bodyHeight())
	}
	press(t, m, tea.KeyPressMsg{Code: tea.KeyPgDown})
	if want := m.cat.detailRows - 1; m.cat.detailOff != want {
		t.Errorf("pgdn scrolled the detail to line %d, want %d (the pane shows %d)", m.cat.detailOff, want, m.cat.detailRows)
	}
}

// TestStaleTraceCleared drives the real program: a trace shown for a
// chain is dropped when the chain, reloaded with r, no longer builds, so
// the Trace tab offers the fixtures instead of the old steps.
func TestStaleTraceCleared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(path, ExampleChainYAML(), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t)
	opts.ChainPath = path
	tm := teatest.NewTestModel(t, New(opts), teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor(t, tm, "a2a-parser")
	tm.Send(k("3"))
	waitFor(t, tm, "Choose a fixture")
	tm.Send(k("enter"))
	waitFor(t, tm, "calls") // the trace is shown
	if err := os.WriteFile(path, []byte("inbound:\n  - name: inference-parser\n  - name: no-such-plugin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.Send(k("r"))
	waitFor(t, tm, "Choose a fixture") // the Trace tab is back at the fixtures
	tm.Send(k("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if fm.tr.run != nil {
		t.Errorf("the trace of the old chain is still held: %s", fm.tr.run.Fixture)
	}
}
