package conformance_test

import (
	"context"
	"strings"
	"testing"

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
	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/sdk"
)

func examplePlugins() []sdk.Plugin {
	return []sdk.Plugin{
		a2aparser.Plugin(), auditlog.Plugin(), contexttrimmer.Plugin(), guardrail.Plugin(),
		inferenceparser.Plugin(), mcpparser.Plugin(), permissionpolicy.Plugin(), piiredactor.Plugin(),
		promptowner.Plugin(), ratelimiter.Plugin(), submitguard.Plugin(), toolallowlist.Plugin(), toolrewriter.Plugin(),
	}
}

// TestExamplesPassInProcess runs the whole plugin suite over every example
// plugin in-process, with poisoned frames (P24).
func TestExamplesPassInProcess(t *testing.T) {
	for _, p := range examplePlugins() {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			rep, err := conformance.Run(context.Background(), conformance.PluginSuite(), conformance.InProcess(p), conformance.Options{PoisonFrames: true})
			if err != nil {
				t.Fatal(err)
			}
			ran := 0
			for _, r := range rep.Results {
				if r.Status != conformance.StatusSkip {
					ran++
				}
				if r.Status.Bad() {
					var b strings.Builder
					for _, f := range r.Failures {
						b.WriteString("\n  " + f.String())
					}
					t.Errorf("%s: %s%s", r.ID, r.Status, b.String())
				}
			}
			if ran == 0 {
				t.Errorf("no case applied to %s", p.Name)
			}
		})
	}
}
