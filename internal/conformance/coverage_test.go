package conformance

import (
	"slices"
	"testing"
)

func TestRuleIDs(t *testing.T) {
	for _, tc := range []struct {
		family string
		n      int
		want   []string // some of the IDs, in order
	}{
		{"P", 1, []string{"P1"}},
		{"D", 10, []string{"D9", "D10"}},
		// Two-digit arithmetic once made P100 out of ":0".
		{"P", 120, []string{"P99", "P100", "P101", "P120"}},
	} {
		got := ruleIDs(tc.family, tc.n)
		if len(got) != tc.n {
			t.Fatalf("ruleIDs(%q, %d): %d IDs", tc.family, tc.n, len(got))
		}
		at := -1
		for _, w := range tc.want {
			i := slices.Index(got, w)
			if i <= at {
				t.Errorf("ruleIDs(%q, %d) = %v: want %s after index %d", tc.family, tc.n, got, w, at)
			}
			at = i
		}
	}
	if got := allRules(); len(got) != 36+20+6 || got[0] != "P1" || got[len(got)-1] != "H6" {
		t.Errorf("allRules() = %v", got)
	}
}
