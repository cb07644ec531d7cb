// Command gendocs regenerates the reference pages of abctl and conformance
// in docs/cli from the cobra commands, and with -man writes man pages of
// both (the release archives carry them). Run it from the repository root:
//
//	go run ./internal/cli/gendocs
//	go run ./internal/cli/gendocs -man dist/man
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/abkit/abkit/internal/cli"
	conformance "github.com/abkit/abkit/internal/conformance/cli"
)

func main() {
	dir := flag.String("dir", "docs/cli", "directory to write the markdown pages into")
	man := flag.String("man", "", "write man pages (section 1) of abctl and conformance into this directory instead")
	flag.Parse()
	if err := run(*dir, *man); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(dir, man string) error {
	if man == "" {
		if err := cli.GenDocs(dir); err != nil {
			return err
		}
		return conformance.GenDocs(dir)
	}
	if err := os.MkdirAll(man, 0o755); err != nil {
		return err
	}
	for _, root := range []*cobra.Command{
		cli.NewRoot(&cli.App{Out: io.Discard, Err: io.Discard}),
		conformance.NewRoot(&conformance.App{Out: io.Discard, Err: io.Discard}),
	} {
		hdr := &doc.GenManHeader{Title: root.Name(), Section: "1", Source: "abkit", Manual: "abkit manual"}
		if err := doc.GenManTree(root, hdr, man); err != nil {
			return fmt.Errorf("man pages of %s: %w", root.Name(), err)
		}
	}
	return nil
}
