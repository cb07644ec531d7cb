// Command faulty-runtime serves one faulty runtime of the contract-fault corpus
// (package faults), named by its first argument or, without one, by the
// name the binary is linked as ("runtime-NAME" or "NAME").
package main

import (
	"os"

	"github.com/abkit/abkit/internal/conformance/faults"
)

func main() { faults.Main(os.Args, "runtime") }
