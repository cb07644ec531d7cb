// Command faulty-runtime serves one faulty runtime of the contract-fault corpus
// (package faults), named by its first argument or, without one, by the
// name the binary is linked as ("runtime-NAME" or "NAME").
package main

import (
	"fmt"
	"os"

	"github.com/abkit/abkit/internal/conformance/faults"
)

func main() {
	f, err := faults.Named(os.Args, "runtime", "runtime-", faults.RuntimeByName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	f.Serve()
}
