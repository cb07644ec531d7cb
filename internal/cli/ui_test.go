package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/tui"
	"github.com/abkit/abkit/sdk/gateway"
)

// Without a terminal, abctl alone prints the catalog as plain lines and
// says on stderr how to open the TUI; the exit code is 0.
func TestRootWithoutTerminal(t *testing.T) {
	r := run(t, false, nil)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	if !strings.Contains(r.out, "guardrail\tP\t") || strings.Contains(r.out, "NAME") {
		t.Errorf("want plain tab-separated catalog lines, got:\n%s", r.out)
	}
	if !strings.Contains(r.err, "abctl ui") {
		t.Errorf("stderr does not say how to open the TUI: %q", r.err)
	}
}

func TestUIUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"ui", "extra"}, ExitUsage, `unexpected argument "extra"`},
		{[]string{"ui", "--fixtures", t.TempDir()}, ExitRead, "no .fixture files"},
		{[]string{"ui", "--chain", "does-not-exist.yaml"}, ExitRead, "does-not-exist.yaml"},
		{[]string{"nosuchcommand"}, ExitUsage, "unknown command"},
	} {
		r := run(t, false, nil, tt.args...)
		if r.code != tt.code || !strings.Contains(r.err, tt.msg) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", tt.args, r.code, tt.code, r.err, tt.msg)
		}
	}
}

// TestUIRunsBinaryPlugins drives the real TUI program with no in-process
// plugins at all: the Trace tab dry-runs a chain whose plugins come from
// a dir: source's binaries, and, with the builtin catalog, from
// --plugin-dir, as dryrun does.
func TestUIRunsBinaryPlugins(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sources []string
		u       uiOpts
	}{
		{"dir source", []string{"dir:" + binDir}, uiOpts{}},
		{"plugin-dir", nil, uiOpts{pluginDir: binDir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			app := &App{Out: &out, Err: &errb, Catalog: CatalogOptions(), Pipeline: func() []gateway.Factory { return nil }}
			app.Catalog.CacheDir = "-"
			o := &globalOpts{app: app, sources: tc.sources, noColor: true}
			u := tc.u
			u.chain, u.fixtures = "../../fixtures/inference/chain.yaml", "../../fixtures/inference"
			m, _, err := newUIModel(o, &u)
			if err != nil {
				t.Fatal(err)
			}
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
				teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
			uiWait(t, tm, "chain ../../fixtures/inference/chain.yaml")
			tm.Send(tea.KeyPressMsg{Code: '3', Text: "3"})
			uiWait(t, tm, "Choose a fixture")
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
			uiWait(t, tm, " calls  ") // the timeline of a finished dry-run
			tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
		})
	}
}

// uiWait waits until the program's output holds every one of want. The
// output is consumed as it is read, so what one wait saw the next does
// not see again.
func uiWait(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		s := ansi.Strip(string(b))
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// TestUIChainErrorAndReload drives the real TUI program: a chain file
// with a YAML error opens with the error (file:line:column) in the Chain
// tab; e runs the editor, which fixes it, and the chain is reloaded; a
// dry-run's trace is dropped when r reloads a chain that no longer builds.
func TestUIChainErrorAndReload(t *testing.T) {
	dir := t.TempDir()
	chain := filepath.Join(dir, "chain.yaml")
	if err := os.WriteFile(chain, []byte("outbound:\n  - name: inference-parser\n    on_eror: observe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile("../../fixtures/inference/chain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fixed := filepath.Join(dir, "fixed.yaml")
	os.WriteFile(fixed, good, 0o644)
	// The "editor" copies the good chain over the file it is given.
	editor := filepath.Join(dir, "editor.sh")
	os.WriteFile(editor, []byte("#!/bin/sh\ncp "+fixed+" \"$1\"\n"), 0o755)

	var out, errb bytes.Buffer
	app := &App{Out: &out, Err: &errb, Catalog: catalog.Options{Builtin: Builtins, CacheDir: "-"},
		Getenv: func(k string) string { return map[string]string{"EDITOR": editor}[k] }}
	o := &globalOpts{app: app, noColor: true}
	m, _, err := newUIModel(o, &uiOpts{chain: chain, fixtures: "../../fixtures/inference"})
	if err != nil {
		t.Fatalf("a YAML error must open the TUI, got %v", err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	tm.Send(tea.KeyPressMsg{Code: '2', Text: "2"})
	uiWait(t, tm, "The chain file could not be loaded", chain+":3:5", "on_eror")
	tm.Send(tea.KeyPressMsg{Code: 'e', Text: "e"})
	uiWait(t, tm, "chain ok", "guardrail")
	tm.Send(tea.KeyPressMsg{Code: '3', Text: "3"})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	uiWait(t, tm, " calls  ")
	// The chain breaks on disk; r reloads it and the old trace goes.
	os.WriteFile(chain, []byte("outbound:\n  - name: guardrail\n"), 0o644)
	tm.Send(tea.KeyPressMsg{Code: 'r', Text: "r"})
	uiWait(t, tm, "finding")
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*tui.Model)
	if fm.HasRun() {
		t.Error("the trace of the old chain is still shown after the chain stopped building")
	}
}
