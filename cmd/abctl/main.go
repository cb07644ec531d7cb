// Command abctl is the operator's tool for abkit plugin pipelines: it lists
// and lints plugin catalogs and validates chain files. See docs/cli/.
package main

import (
	"os"

	"golang.org/x/term"

	"github.com/abkit/abkit/internal/cli"
)

// version, commit and date are set at link time in release builds
// (.goreleaser.yaml); otherwise internal/buildinfo reads Go's stamps.
var version, commit, date string

func main() {
	outTTY := term.IsTerminal(int(os.Stdout.Fd()))
	width := 0
	if outTTY {
		width, _, _ = term.GetSize(int(os.Stdout.Fd())) // 0 when it cannot be read
	}
	app := &cli.App{
		Out:         os.Stdout,
		Err:         os.Stderr,
		OutTerminal: outTTY,
		OutWidth:    width,
		ErrTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		Getenv:      os.Getenv,
		Catalog:     cli.CatalogOptions(),
		Version:     version,
		Commit:      commit,
		Date:        date,
	}
	// SIGINT and SIGTERM alike: the first cancels the command and stops
	// its plugin processes, a second kills them and exits at once.
	os.Exit(cli.MainWithSignals(app, os.Args[1:]))
}
