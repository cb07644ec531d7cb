// Command header-stamp serves gatewayplugins.Stamp for the boundary tests.
package main

import (
	"github.com/abkit/abkit/internal/pluginhost/testdata/gatewayplugins"
	"github.com/abkit/abkit/sdk"
)

func main() { sdk.Serve(gatewayplugins.Stamp()) }
