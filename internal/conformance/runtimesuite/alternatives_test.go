package runtimesuite_test

import (
	"slices"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/refruntime"
)

// choicesWithoutAlternative are the choice points no test runtime or
// plugin takes the other alternative of yet, each with what it would
// take. The list only shrinks: TestEveryChoiceHasAnAlternative fails on
// a choice missing here and covered nowhere, and on one listed here that
// is covered.
var choicesWithoutAlternative = map[string]string{}

// TestEveryChoiceHasAnAlternative: each choice point has a runtime taking
// its other alternative (a refruntime alternative under
// internal/refruntime/alt, judged by TestSelftest: passes, fails
// --strict; or minipipe, judged by TestMinipipeRuntime), or is listed in
// choicesWithoutAlternative.
func TestEveryChoiceHasAnAlternative(t *testing.T) {
	covered := map[string]string{}
	for a, spec := range refruntime.Alts {
		if spec.Choice != "" {
			covered[spec.Choice] = "internal/refruntime/alt/" + string(a)
		}
	}
	for _, c := range minipipeDeclares {
		covered[c] = "examples/runtimes/minipipe"
	}
	var have, missing []string
	for _, cp := range conformance.ChoicePoints() {
		by, ok := covered[cp.ID]
		_, listed := choicesWithoutAlternative[cp.ID]
		switch {
		case ok && listed:
			t.Errorf("%s is taken by %s; drop it from choicesWithoutAlternative", cp.ID, by)
		case !ok && !listed:
			t.Errorf("%s: no runtime or plugin takes another alternative (%v); write one, or list it in choicesWithoutAlternative", cp.ID, cp.Names()[1:])
		case ok:
			have = append(have, cp.ID+" ("+by+")")
		default:
			missing = append(missing, cp.ID)
		}
	}
	slices.Sort(have)
	t.Logf("%d choices with an alternative runtime: %v", len(have), have)
	t.Logf("%d without: %v", len(missing), missing)
}
