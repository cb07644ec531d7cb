package conformance_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/examples/plugins/piiredactor"
	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/sdk"
)

// TestOutputsWrittenByParsers checks that X1/outputs/written runs (is not
// skipped) on the example parsers, and passes.
func TestOutputsWrittenByParsers(t *testing.T) {
	for _, p := range []sdk.Plugin{inferenceparser.Plugin(), mcpparser.Plugin(), a2aparser.Plugin()} {
		rep, err := conformance.Run(context.Background(), conformance.PluginSuite(), conformance.InProcess(p),
			conformance.Options{Timeout: time.Minute, Run: []*regexp.Regexp{regexp.MustCompile(`^X1/outputs/written$`)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 1 || rep.Results[0].Status != conformance.StatusPass {
			t.Errorf("%s: %+v, want X1/outputs/written to pass", p.Name, rep.Results)
		}
	}
	// A key of a protocol the suite has no traffic for is not checked.
	rep, err := conformance.Run(context.Background(), conformance.PluginSuite(), conformance.InProcess(piiredactor.Plugin()),
		conformance.Options{Timeout: time.Minute, Run: []*regexp.Regexp{regexp.MustCompile(`^X1/outputs/written$`)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || rep.Results[0].Status != conformance.StatusSkip {
		t.Errorf("pii-redactor: %+v, want X1/outputs/written skipped", rep.Results)
	}
}

// emptyObserved launches in-process subjects whose Describe answer lists no
// observed instances, as a hand-written Describe may.
type emptyObserved struct{ conformance.Launcher }

func (l emptyObserved) Launch(ctx context.Context) (conformance.Subject, error) {
	s, err := l.Launcher.Launch(ctx)
	if err != nil {
		return nil, err
	}
	s.Describe().Pipeline.Observed = nil
	return s, nil
}

// TestMonitorEmptyObserved checks that an empty observed list fails the
// cases that make instances, citing P2, where the P2 descriptor cases
// alone would check nothing.
func TestMonitorEmptyObserved(t *testing.T) {
	rep, err := conformance.Run(context.Background(), conformance.PluginSuite(),
		emptyObserved{conformance.InProcess(inferenceparser.Plugin())},
		conformance.Options{Timeout: time.Minute, Run: []*regexp.Regexp{regexp.MustCompile(`^P31/state/no-carry-over$`)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("got %d results", len(rep.Results))
	}
	r := rep.Results[0]
	found := false
	for _, f := range r.Failures {
		if f.Rule == "P2" && strings.Contains(f.Message, "observed list holds 0 instances") {
			found = true
		}
	}
	if r.Status != conformance.StatusFail || !found {
		t.Errorf("status %v, failures %v; want a P2 finding about the observed list", r.Status, r.Failures)
	}
}
