package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

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
			uiWait(t, tm, "dry-run of chat-stream: allow")
			tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
		})
	}
}

func uiWait(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return strings.Contains(ansi.Strip(string(b)), s)
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}
