package conformance_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/faults"
)

// TestExploreExamplesPass: a small exploration budget (CI) finds nothing
// in the example plugins, in-process with poisoned frames.
func TestExploreExamplesPass(t *testing.T) {
	for _, p := range examplePlugins() {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			rep, err := conformance.Run(context.Background(), conformance.ExploreSuite(60, 1), conformance.InProcess(p), conformance.Options{PoisonFrames: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				if r.Status.Bad() {
					t.Errorf("%s: %s: %v", r.ID, r.Status, r.Failures)
				}
			}
		})
	}
}

// TestExploreShrinks: exploring a faulty plugin reports a finding of its
// rule, shrunk to the one exchange that shows it, with the seed that
// reruns it; the same seed gives the same report.
func TestExploreShrinks(t *testing.T) {
	for _, name := range []string{"p-get-has-no-body", "p-frames-split-on-lf"} {
		f, ok := faults.PluginByName(name)
		if !ok {
			t.Fatalf("no fault %s", name)
		}
		run := func() string {
			rep, err := conformance.Run(context.Background(), conformance.ExploreSuite(200, 7), conformance.InProcess(f.Plugin()), conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Results[0]
			if r.Status != conformance.StatusFail || len(r.Failures) != 1 || r.Failures[0].Rule != f.Rule {
				t.Fatalf("%s: %s %v, want one %s finding", name, r.Status, r.Failures, f.Rule)
			}
			return r.Failures[0].Message
		}
		msg := run()
		if !regexp.MustCompile(`shrunk to 1 \(`).MatchString(msg) || !strings.Contains(msg, "--explore 200 --seed 7") || !strings.Contains(msg, "\n    1. ") {
			t.Errorf("%s: the report is not shrunk to one exchange with its rerun line:\n%s", name, msg)
		}
		// Timings aside, the same seed gives the same sequence.
		strip := regexp.MustCompile(`\(\d+ reruns\)`)
		if again := run(); strip.ReplaceAllString(again, "") != strip.ReplaceAllString(msg, "") {
			t.Errorf("%s: the same seed gave another report:\n%s\nthen\n%s", name, msg, again)
		}
	}
}
