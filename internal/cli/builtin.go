package cli

import (
	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/sdk/gateway"
)

// Builtins lists the example plugins compiled into abctl, for the builtin
// catalog source.
func Builtins() []catalog.Builtin {
	var out []catalog.Builtin
	for _, f := range []gateway.Factory{mcpparser.Factory(), a2aparser.Factory(), inferenceparser.Factory()} {
		out = append(out, catalog.Builtin{Name: f.Name, Pipeline: &f})
	}
	return out
}
