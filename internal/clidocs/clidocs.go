// Package clidocs writes the reference pages of a cobra command tree:
// markdown for docs/cli and man pages for the release archives. abctl and
// conformance both use it, so their pages are made the same way.
package clidocs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Markdown writes one markdown page per command of root into dir,
// replacing the pages of root's program there (ROOTNAME*.md) and leaving
// other programs' pages alone, so that a command removed loses its page.
func Markdown(root *cobra.Command, dir string) error {
	root.DisableAutoGenTag = true
	old, err := filepath.Glob(filepath.Join(dir, root.Name()+"*.md"))
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

// Man writes section 1 man pages of root's commands into dir. The date in
// the header honours SOURCE_DATE_EPOCH, for reproducible archives.
func Man(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	hdr := &doc.GenManHeader{Title: root.Name(), Section: "1", Source: "abkit", Manual: "abkit manual"}
	if err := doc.GenManTree(root, hdr, dir); err != nil {
		return fmt.Errorf("man pages of %s: %w", root.Name(), err)
	}
	return nil
}
