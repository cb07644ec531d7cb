package guardrail_test

import (
	"testing"

	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/sdk/conformancetest"
)

// TestConformance runs abkit's plugin suite over the guardrail in-process,
// as a plugin author does from their own go test: every case is a subtest,
// frames are poisoned after each call (P24), and the cases for other
// families are skipped with the reason.
func TestConformance(t *testing.T) {
	conformancetest.Run(t, guardrail.Plugin())
}
