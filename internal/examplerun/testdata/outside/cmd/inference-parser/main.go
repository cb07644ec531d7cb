// Command inference-parser serves this module's copy of abkit's
// inference-parser example.
package main

import (
	"example.com/outside/inferenceparser"
	"github.com/abkit/abkit/sdk"
)

func main() { sdk.Serve(inferenceparser.Plugin()) }
