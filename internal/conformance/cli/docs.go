package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra/doc"
)

// GenDocs writes one markdown reference page per conformance command into
// dir (docs/cli, beside abctl's), replacing the conformance pages there.
// `go run ./internal/cli/gendocs` calls it; a test fails when the pages are
// out of date.
func GenDocs(dir string) error {
	root := NewRoot(&App{Out: io.Discard, Err: io.Discard})
	root.DisableAutoGenTag = true
	old, err := filepath.Glob(filepath.Join(dir, "conformance*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("remove stale page: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return doc.GenMarkdownTree(root, dir)
}
