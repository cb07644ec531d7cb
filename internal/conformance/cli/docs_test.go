package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDocsUpToDate: docs/cli holds one current page per conformance
// command.
func TestDocsUpToDate(t *testing.T) {
	tmp := t.TempDir()
	if err := GenDocs(tmp); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob(filepath.Join(tmp, "conformance*.md"))
	have, _ := filepath.Glob("../../../docs/cli/conformance*.md")
	if len(want) == 0 || len(want) != len(have) {
		t.Errorf("docs/cli has %d conformance pages, the commands make %d; run go run ./internal/cli/gendocs", len(have), len(want))
	}
	for _, w := range want {
		gen, _ := os.ReadFile(w)
		cur, err := os.ReadFile(filepath.Join("../../../docs/cli", filepath.Base(w)))
		if err != nil || !bytes.Equal(gen, cur) {
			t.Errorf("docs/cli/%s is out of date; run go run ./internal/cli/gendocs", filepath.Base(w))
		}
	}
}
