package runtimesuite

import "github.com/abkit/abkit/internal/conformance"

// reasons says, for every rule no runtime case checks, why: those rules are
// owed by plugins, not by the runtime that hosts them, or the runtime's side
// is not observable through the runtime protocol.
var reasons = map[string]string{
	"P2": "owed by plugins (every instance of a factory reports the same capabilities); checked by the plugin suite",
	"P3": "owed by plugins (which capability fields they declare); checked by the plugin suite. The runtime's reading of the fields is checked under P4, P9-P11 and P18",
	"P5": "owed by plugins (a one-line description of at most 80 runes); checked by the plugin suite",
	"P24": "owed by plugins (copy frame bytes they keep); checked by the plugin suite with poisoned frames. The runtime's side, reusing or overwriting its buffer after the call, " +
		"is not observable through the runtime protocol: every frame reaches a probe as its own copy inside a gRPC message",
}

// Coverage returns the runtime suite's rule coverage: for every rule of the
// contracts, the runtime cases that check it or why none does.
func Coverage() []conformance.RuleCoverage { return conformance.CoverageWith(Suite(), reasons) }
