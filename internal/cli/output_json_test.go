package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/abkit/abkit/internal/catalog"
)

// TestJSONOutputEveryCommand: -o json is a global flag, so every command
// that prints data prints valid JSON with it (and -o of an unknown format
// is a usage error), instead of silently printing its text form.
func TestJSONOutputEveryCommand(t *testing.T) {
	dir := t.TempDir()
	sse := filepath.Join(dir, "body.sse")
	if err := os.WriteFile(sse, []byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		keys []string // top-level keys the JSON object must have
	}{
		{"replay suite", []string{"replay", "../../fixtures/mcp"}, 0, []string{"suites", "total", "failed"}},
		{"fixture check", []string{"fixture", "check", "../../fixtures/mcp/mcp-json.fixture"}, 0, []string{"files"}},
		{"fixture check bad", []string{"fixture", "check", sse}, ExitRead, []string{"files"}},
		{"fixture import sse", []string{"fixture", "import", "--sse", sse, "--out", filepath.Join(dir, "x.fixture")}, 0, []string{"written"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runAbctl(t, append(tc.args, "-o", "json")...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("stdout is not a JSON object: %v\n%s", err, out)
			}
			for _, k := range tc.keys {
				if _, ok := v[k]; !ok {
					t.Errorf("JSON lacks %q: %s", k, out)
				}
			}
			if code, _, _ := runAbctl(t, append(tc.args, "-o", "xml")...); code != ExitUsage {
				t.Errorf("-o xml: exit %d, want %d", code, ExitUsage)
			}
		})
	}
}

// TestCatalogShowSuggestsName: a misspelt plugin name is a usage error
// that says which name was meant (P1 names are the keys of the catalog).
func TestCatalogShowSuggestsName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"tool-alowlist", `did you mean "tool-allowlist"?`},
		{"mcp_parser", `did you mean "mcp-parser"?`},
		{"zzzzzzzzzzzzzz", "see 'abctl catalog list'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runAbctl(t, "catalog", "show", tc.name)
			if code != ExitUsage || out != "" {
				t.Fatalf("exit %d, stdout %q; want %d and nothing on stdout", code, out, ExitUsage)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q lacks %q", errOut, tc.want)
			}
		})
	}
}

// TestOutputFormatsEveryCommand: every abctl command that prints data
// takes the one global -o (table, json or yaml): json and yaml carry the
// same keys, table is the default, and any other value is a usage error
// that lists the three. The command tree is walked, so a new command
// without a case here fails the test.
func TestOutputFormatsEveryCommand(t *testing.T) {
	dir := t.TempDir()
	sse := filepath.Join(dir, "body.sse")
	if err := os.WriteFile(sse, []byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	chain := "../../fixtures/inference/chain.yaml"
	fx := "../../fixtures/inference/anthropic-refusal.fixture"
	cases := map[string][]string{
		"abctl version":        {"version"},
		"abctl catalog list":   {"catalog", "list"},
		"abctl catalog show":   {"catalog", "show", "guardrail"},
		"abctl catalog lint":   {"catalog", "lint"},
		"abctl chain validate": {"chain", "validate", chain},
		"abctl chain show":     {"chain", "show", chain},
		"abctl dryrun":         {"dryrun", "--chain", chain, fx},
		"abctl replay":         {"replay", "../../fixtures/mcp"},
		"abctl fixture check":  {"fixture", "check", fx},
		"abctl fixture import": {"fixture", "import", "--sse", sse, "--out", filepath.Join(dir, "x.fixture")},
		"abctl cache clean":    {"cache", "clean"},
		"abctl record":         {"record", "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1:0", "--out", filepath.Join(dir, "rec")},
		"abctl serve":          {"serve", "--chain", chain, "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1:0"},
		"abctl ui":             nil, // interactive: no output format
		"abctl completion":     nil,
		"abctl help":           nil,
		"abctl":                nil, // bare abctl is ui on a terminal, catalog list off one
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if strings.HasPrefix(c.CommandPath(), "abctl completion") {
			return
		}
		if c.Runnable() && (!c.HasSubCommands() || !c.HasParent()) { // groups only print their help
			if _, ok := cases[c.CommandPath()]; !ok {
				t.Errorf("%q has no case: say which output formats it prints", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(&App{Out: io.Discard, Err: io.Discard}))
	for name, args := range cases {
		if args == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			// record and serve run until their context ends: ended, they
			// stop and report what they wrote (nothing).
			run := func(format string) (int, string, string) {
				var o bytes.Buffer
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				e := &cancelOnWrite{}
				if args[0] == "serve" {
					// A signal before serve starts is an interrupt (130);
					// the stop comes once it serves.
					e.cancel, e.after = cancel, "Ctrl-C to stop"
				}
				app := &App{Out: &o, Err: e, Catalog: catalog.Options{Builtin: Builtins, CacheDir: t.TempDir()}, Version: "test"}
				if args[0] == "record" {
					cancel()
				}
				code := Main(ctx, app, append(append([]string{}, args...), "-o", format))
				return code, o.String(), e.String()
			}
			var keys [2][]string
			for i, format := range []string{"json", "yaml"} {
				code, out, errOut := run(format)
				if code != 0 {
					t.Fatalf("-o %s: exit %d\nstdout:\n%s\nstderr:\n%s", format, code, out, errOut)
				}
				var v map[string]any
				var err error
				if format == "json" {
					err = json.Unmarshal([]byte(out), &v)
				} else {
					err = yaml.Unmarshal([]byte(out), &v)
				}
				if err != nil || len(v) == 0 {
					t.Fatalf("-o %s: stdout is not a %s object (%v):\n%s", format, format, err, out)
				}
				keys[i] = slices.Sorted(maps.Keys(v))
			}
			if !slices.Equal(keys[0], keys[1]) {
				t.Errorf("json keys %v, yaml keys %v", keys[0], keys[1])
			}
			if code, _, errOut := run("table"); code != 0 {
				t.Errorf("-o table: exit %d: %s", code, errOut)
			}
			if code, _, errOut := run("text"); code != ExitUsage || !strings.Contains(errOut, "want table, json or yaml") {
				t.Errorf("-o text: exit %d, stderr %q; want a usage error listing table, json and yaml", code, errOut)
			}
		})
	}
}

// cancelOnWrite is a stderr that ends a command's context once it has
// printed after (a server's "ready" line), as a signal would.
type cancelOnWrite struct {
	mu     sync.Mutex
	b      bytes.Buffer
	after  string
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	if w.cancel != nil && strings.Contains(w.b.String(), w.after) {
		w.cancel()
	}
	return n, err
}

func (w *cancelOnWrite) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
