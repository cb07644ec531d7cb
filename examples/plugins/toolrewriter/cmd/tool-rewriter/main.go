// Command tool-rewriter serves the tool-rewriter example plugin as its own go-plugin
// binary, from the same code abkit runs in-process. Run directly it prints
// go-plugin's "not meant to be executed directly" notice and exits non-zero;
// a host (abctl, the conformance suite) starts it.
package main

import (
	"github.com/abkit/abkit/examples/plugins/toolrewriter"
	"github.com/abkit/abkit/sdk"
)

func main() { sdk.Serve(toolrewriter.Plugin()) }
