// Command guardrail serves this module's copy of abkit's guardrail
// example.
package main

import (
	"example.com/outside/guardrail"
	"github.com/abkit/abkit/sdk"
)

func main() { sdk.Serve(guardrail.Plugin()) }
