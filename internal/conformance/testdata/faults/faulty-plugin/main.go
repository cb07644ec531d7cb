// Command faulty-plugin serves one faulty plugin of the contract-fault corpus
// (package faults), named by its first argument or, without one, by the
// name the binary is linked as.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/abkit/abkit/internal/conformance/faults"
	"github.com/abkit/abkit/sdk"
)

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	f, ok := faults.PluginByName(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "faults: no faulty plugin named %q (see internal/conformance/faults)\n", name)
		os.Exit(2)
	}
	sdk.Serve(f.Plugin())
}
