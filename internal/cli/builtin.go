package cli

import (
	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/auditlog"
	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/examples/plugins/piiredactor"
	"github.com/abkit/abkit/examples/plugins/ratelimiter"
	"github.com/abkit/abkit/examples/plugins/toolallowlist"
	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/sdk/gateway"
)

// Builtins lists the example plugins compiled into abctl, for the builtin
// catalog source.
//
// TODO(issue 5): switch to examples/plugins/builtin.All() when it lands; it
// also brings the family D and H examples.
func Builtins() []catalog.Builtin {
	factories := []gateway.Factory{
		a2aparser.Factory(), auditlog.Factory(), guardrail.Factory(), inferenceparser.Factory(),
		mcpparser.Factory(), piiredactor.Factory(), ratelimiter.Factory(), toolallowlist.Factory(),
	}
	out := make([]catalog.Builtin, 0, len(factories))
	for i := range factories {
		out = append(out, catalog.Builtin{Name: factories[i].Name, Pipeline: &factories[i]})
	}
	return out
}
