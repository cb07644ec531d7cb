// Command gendocs regenerates abctl's reference pages in docs/cli from the
// cobra commands. Run it from the repository root:
//
//	go run ./internal/cli/gendocs
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/abkit/abkit/internal/cli"
)

func main() {
	dir := flag.String("dir", "docs/cli", "directory to write the pages into")
	flag.Parse()
	if err := cli.GenDocs(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
