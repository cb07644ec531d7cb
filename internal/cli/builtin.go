package cli

import (
	"github.com/abkit/abkit/examples/plugins/builtin"
	"github.com/abkit/abkit/internal/catalog"
)

// Builtins lists the example plugins compiled into abctl, for the builtin
// catalog source.
func Builtins() []catalog.Builtin {
	all := builtin.All()
	out := make([]catalog.Builtin, 0, len(all))
	for _, p := range all {
		out = append(out, catalog.FromSDK(p))
	}
	return out
}
