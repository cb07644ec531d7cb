// Command conformance checks, rule by rule, whether a plugin honours the
// abkit contracts. See docs/conformance.md.
package main

import (
	"os"

	"github.com/abkit/abkit/internal/conformance/cli"
)

// version, commit and date are set at link time in release builds
// (.goreleaser.yaml); otherwise internal/buildinfo reads Go's stamps.
var version, commit, date string

func main() {
	// SIGINT/SIGTERM cancel the run: results so far are printed and every
	// plugin process is stopped before exit (130/143); a second signal
	// kills them and exits at once.
	os.Exit(cli.MainWithSignals(&cli.App{Out: os.Stdout, Err: os.Stderr, Version: version, Commit: commit, Date: date}, os.Args[1:]))
}
