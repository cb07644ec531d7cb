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
