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

	"github.com/abkit/abkit/internal/cli"
	"github.com/abkit/abkit/internal/clidocs"
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
	for _, root := range []*cobra.Command{
		cli.NewRoot(&cli.App{Out: io.Discard, Err: io.Discard}),
		conformance.NewRoot(&conformance.App{Out: io.Discard, Err: io.Discard}),
	} {
		if err := clidocs.Man(root, man); err != nil {
			return err
		}
	}
	return nil
}
