package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestFileSourceStrict(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"unknown field yaml", "plugins:\n  - name: a\n    descripton: x\n", ":3:5: "},
		{"wrong type yaml", "plugins:\n  - name: a\n    capabilities: {reads_body: maybe}\n", ":3:"},
		{"unknown field json", "{\"plugins\": [\n  {\"name\": \"a\", \"bogus\": 1}\n]}\n", ":2:"},
		{"syntax json", "{\"plugins\": [\n", "catalog"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "catalog")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(context.Background(), []string{"file:" + p}, Options{})
			var re *ReadError
			var pe *PosError
			if !errors.As(err, &re) || !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a ReadError wrapping a PosError", err)
			}
			if !strings.Contains(err.Error(), p+tc.want) && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want %q", err, tc.want)
			}
		})
	}
}

// TestFileRoundTrip: what the JSON form of a catalog says, a file: source
// reads back unchanged (except the origin, which becomes the file).
func TestFileRoundTrip(t *testing.T) {
	c := testCatalog(t)
	b, err := json.Marshal(File{Plugins: c.Plugins})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "saved.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c2, err := Load(context.Background(), []string{"file:" + p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Plugins, c2.Plugins, cmpopts.IgnoreFields(Descriptor{}, "Origin"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestNormalisedCapabilities: P4 is applied to every source's capabilities.
func TestNormalisedCapabilities(t *testing.T) {
	c := testCatalog(t)
	d, _ := c.Lookup("response-rewriter")
	if !d.Capabilities.ReadsBody {
		t.Errorf("writes_response_body without reads_body after loading (P4)")
	}
}

// TestChainDecodeErrorsNameFieldAndFix: a chain file that does not decode
// is reported once with file:line:column, the field's path, and what to do:
// the known fields (and the nearest one) for an unknown key, the field for
// a value of the wrong type.
func TestChainDecodeErrorsNameFieldAndFix(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{"unknown entry field yaml", "inbound:\n  - name: a\n    onerror: observe\n",
			[]string{"c.yaml:3:5: ", `unknown field "onerror" in inbound[0]`, `did you mean "on_error"?`, "known fields: name, on_error, config"}},
		{"unknown top-level field", "mode: proxy\ninbund:\n  - name: a\n",
			[]string{"c.yaml:2:1: ", `unknown field "inbund"`, `did you mean "inbound"?`, "known fields: mode, inbound, outbound, extensions, hooks, tool_policy"}},
		{"unknown field no near name", "hooks:\n  - plugin: h\n    zzzzzzzz: 1\n",
			[]string{"c.yaml:3:5: ", `unknown field "zzzzzzzz" in hooks[0]`, "known fields: plugin, id, order, policy"}},
		{"unknown field json", "{\"outbound\": [{\"nmae\": \"x\"}]}\n",
			[]string{"c.yaml:1:", `unknown field "nmae" in outbound[0]`, `did you mean "name"?`}},
		{"wrong type", "mode: proxy\ninbound: 5\n",
			[]string{"c.yaml:2:10: ", "inbound: ", "sequence"}},
		{"wrong type nested", "extensions:\n  - plugin: p\n    priority: high\n",
			[]string{"c.yaml:3:15: ", "extensions[0].priority: "}},
		{"unknown source", "inbound:\n  - name: a\n  - name: b\n    source: dirs\n",
			[]string{"c.yaml:4:5: ", `inbound[1].source: "dirs" is not a plugin source`, "use builtin", "or dir"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadChainFile(p)
			if err == nil {
				t.Fatal("decoded without error")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			// The file is named once, not "c.yaml: c.yaml:3:5".
			if n := strings.Count(msg, p); n != 1 {
				t.Errorf("error %q names the file %d times, want 1", msg, n)
			}
		})
	}
}
