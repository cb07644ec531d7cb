// Command faulty-plugin serves one faulty plugin of the contract-fault corpus
// (package faults), named by its first argument or, without one, by the
// name the binary is linked as.
package main

import (
	"os"

	"github.com/abkit/abkit/internal/conformance/faults"
)

func main() { faults.Main(os.Args, "plugin") }
