package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
