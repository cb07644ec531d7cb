package runtimesuite

import (
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/conformance/broken"
	"github.com/abkit/abkit/internal/refruntime"
)

// TestCoverageNoGaps: every rule of the contracts has runtime cases or a
// runtime-specific reason, and the reasons never hide a rule a case checks
// (P1, P4, P24, D1, D2 were decided rule by rule; P1's duplicate and empty
// entry names are the runtime's build check).
func TestCoverageNoGaps(t *testing.T) {
	cov := Coverage()
	if len(cov) != 36+20+6 {
		t.Fatalf("%d rules; want 62", len(cov))
	}
	for _, r := range cov {
		switch {
		case len(r.Cases) == 0 && (r.Reason == "" || strings.HasPrefix(r.Reason, "GAP")):
			t.Errorf("%s: no runtime case and no stated reason (%q)", r.Rule, r.Reason)
		case len(r.Cases) > 0 && r.Reason != "":
			t.Errorf("%s: has cases %v and a reason %q", r.Rule, r.Cases, r.Reason)
		case len(r.Cases) == 0 && strings.Contains(r.Reason, "chain building is the host's"):
			t.Errorf("%s: borrows the plugin suite's reason %q", r.Rule, r.Reason)
		}
	}
	for rule := range reasons {
		for _, r := range cov {
			if r.Rule == rule && len(r.Cases) > 0 {
				t.Errorf("%s: a stated reason for a rule the suite checks (%v)", rule, r.Cases)
			}
		}
	}
	for _, want := range []string{"P1", "P4", "D1", "D2", "D3", "D5", "D20"} {
		for _, r := range cov {
			if r.Rule == want && len(r.Cases) == 0 {
				t.Errorf("%s: no runtime case", want)
			}
		}
	}
}

// TestBugNamesDistinct: a broken runtime's name must not be a broken
// plugin's, or the self-test would link one binary over the other.
func TestBugNamesDistinct(t *testing.T) {
	for b := range refruntime.Bugs {
		if _, clash := broken.Expect[string(b)]; clash {
			t.Errorf("refruntime bug %q is also a broken plugin of the plugin suite", b)
		}
	}
}
