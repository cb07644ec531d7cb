// Command faulty-runtime serves one faulty runtime of the contract-fault corpus
// (package faults), named by its first argument or, without one, by the
// name the binary is linked as ("runtime-NAME" or "NAME").
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/abkit/abkit/internal/conformance/faults"
)

func main() {
	name := strings.TrimPrefix(strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe"), "runtime-")
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	f, ok := faults.RuntimeByName(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "faults: no faulty runtime named %q (see internal/conformance/faults)\n", name)
		os.Exit(2)
	}
	f.Serve()
}
