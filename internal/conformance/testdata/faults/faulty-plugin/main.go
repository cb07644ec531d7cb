// Command faulty-plugin serves one faulty plugin of the contract-fault corpus
// (package faults), named by its first argument or, without one, by the
// name the binary is linked as.
package main

import (
	"fmt"
	"os"

	"github.com/abkit/abkit/internal/conformance/faults"
	"github.com/abkit/abkit/sdk"
)

func main() {
	f, err := faults.Named(os.Args, "plugin", "", faults.PluginByName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sdk.Serve(f.Plugin())
}
