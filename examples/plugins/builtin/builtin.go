// Package builtin lists abkit's example plugins: abctl's built-in catalog
// and the plugins the conformance suite runs. Each entry bundles what the
// plugin serves in families P (a pipeline factory), D (an intercept
// extension) and H (hook-bus hooks).
package builtin

import (
	"slices"
	"strings"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/auditlog"
	"github.com/abkit/abkit/examples/plugins/contexttrimmer"
	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/examples/plugins/permissionpolicy"
	"github.com/abkit/abkit/examples/plugins/piiredactor"
	"github.com/abkit/abkit/examples/plugins/promptowner"
	"github.com/abkit/abkit/examples/plugins/ratelimiter"
	"github.com/abkit/abkit/examples/plugins/submitguard"
	"github.com/abkit/abkit/examples/plugins/toolallowlist"
	"github.com/abkit/abkit/examples/plugins/toolrewriter"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// All returns every example plugin, in name order. Each call builds fresh
// values, so callers may keep or change them.
func All() []sdk.Plugin {
	all := []sdk.Plugin{
		a2aparser.Plugin(),
		auditlog.Plugin(),
		contexttrimmer.Plugin(),
		guardrail.Plugin(),
		inferenceparser.Plugin(),
		mcpparser.Plugin(),
		permissionpolicy.Plugin(),
		piiredactor.Plugin(),
		promptowner.Plugin(),
		ratelimiter.Plugin(),
		submitguard.Plugin(),
		toolallowlist.Plugin(),
		toolrewriter.Plugin(),
	}
	slices.SortFunc(all, func(a, b sdk.Plugin) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// Get returns the example plugin named name.
func Get(name string) (sdk.Plugin, bool) {
	for _, p := range All() {
		if p.Name == name {
			return p, true
		}
	}
	return sdk.Plugin{}, false
}

// Factories returns the family P factories of the examples, in name order:
// what a pipeline runtime registers to build chains of them.
func Factories() []gateway.Factory {
	var out []gateway.Factory
	for _, p := range All() {
		if p.Pipeline != nil {
			out = append(out, *p.Pipeline)
		}
	}
	return out
}
