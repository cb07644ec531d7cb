package runtimesuite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// exploreSeed and exploreN are the CI budget of the exploration tests: a
// fixed seed, so that a failure reruns as it was
// (conformance run --runtime BIN --explore 30 --seed 24).
const (
	exploreSeed = 24
	exploreN    = 30
)

func implPath(t *testing.T, name string) string {
	t.Helper()
	for _, im := range impls {
		if im.Name == name {
			return im.Path
		}
	}
	t.Fatalf("no implementation %s was built", name)
	return ""
}

func launchRT(t *testing.T, name string) *Runtime {
	t.Helper()
	r, err := Launcher{Path: implPath(t, name), StartTimeout: time.Minute}.LaunchRuntime(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// The reference explored against itself finds nothing: every event the
// comparison reads is fixed by the scenario, not by timing.
func TestExploreReferenceAgreesWithItself(t *testing.T) {
	e := &Explorer{Test: launchRT(t, "abkit-runtime"), Ref: launchRT(t, "abkit-runtime")}
	found, choices := e.Explore(context.Background(), exploreSeed, exploreN, nil)
	for _, f := range append(found, choices...) {
		b, _ := json.Marshal(f.Scenario)
		t.Errorf("scenario #%d: %s\n%s", f.Index, f.Diff, b)
	}
}

// Runtimes taking another allowed alternative and declaring it differ
// from the reference only at those choices, which do not count unless
// strict.
func TestExploreDeclaredChoicesDoNotCount(t *testing.T) {
	ref := launchRT(t, "abkit-runtime")
	for _, alt := range []string{"fail-fast-build", "warnings-callback-only", "notify-fire-and-forget", "build-errors-without-rules"} {
		e := &Explorer{Test: launchRT(t, alt), Ref: ref}
		found, choices := e.Explore(context.Background(), exploreSeed, exploreN, nil)
		for _, f := range found {
			b, _ := json.Marshal(f.Scenario)
			t.Errorf("%s: scenario #%d: %s\n%s", alt, f.Index, f.Diff, b)
		}
		t.Logf("%s: %d differences at declared choices", alt, len(choices))
	}
}

// Exploration finds broken runtimes: each is reported with a rule, shrunk
// to a scenario no larger that still differs, and the shrunk scenario
// written to a file and read back replays to a difference of that rule.
func TestExploreFindsBrokenRuntimes(t *testing.T) {
	ref := launchRT(t, "abkit-runtime")
	caught := 0
	for _, bug := range []string{"fifo-finish", "last-twice", "response-forward", "frames-declaration-order", "header-changes-lost"} {
		bin := implPath(t, bug)
		e := &Explorer{Test: launchRT(t, bug), Ref: ref, Fresh: func(ctx context.Context) (*Runtime, error) {
			return Launcher{Path: bin, StartTimeout: time.Minute}.LaunchRuntime(ctx)
		}}
		t.Cleanup(func() { e.Test.Close() }) // a crash replaces the runtime
		found, _ := e.Explore(context.Background(), exploreSeed, exploreN, nil)
		if len(found) == 0 {
			t.Logf("%s: no difference in %d scenarios of seed %d", bug, exploreN, exploreSeed)
			continue
		}
		caught++
		for _, f := range found {
			b, _ := json.Marshal(f.Scenario)
			t.Logf("%s: scenario #%d, %s; shrunk from %d to %d parts in %d runs (needs history: %v):\n%s", bug, f.Index, f.Diff, f.From, f.To, f.Trials, f.NeedsHistory, b)
			if f.To > f.From {
				t.Errorf("%s: shrinking grew the scenario from %d to %d parts", bug, f.From, f.To)
			}
			if f.NeedsHistory || strings.HasPrefix(f.Diff.Got, "the runtime failed") {
				// A crash may come from an earlier scenario's late
				// call (a finisher left running): the report says it
				// needs the run's history, and only the seed replays it.
				continue
			}
			path := filepath.Join(t.TempDir(), "s.json")
			if err := WriteScenario(path, f.Scenario); err != nil {
				t.Fatal(err)
			}
			x, err := LoadScenario(path)
			if err != nil {
				t.Fatal(err)
			}
			if d, _, _ := e.Check(context.Background(), x); d == nil || d.Rule != f.Diff.Rule {
				t.Errorf("%s: the shrunk scenario replayed to %v; want a difference of %s", bug, d, f.Diff.Rule)
			}
		}
	}
	if caught < 2 {
		t.Errorf("exploration caught %d broken runtimes; want at least 2", caught)
	}
}

// Generate is a function of the seed and the index alone.
func TestGenerateIsDeterministic(t *testing.T) {
	for i := range 20 {
		a, _ := json.Marshal(Generate(7, i, []string{"P", "D", "H"}))
		b, _ := json.Marshal(Generate(7, i, []string{"P", "D", "H"}))
		if string(a) != string(b) {
			t.Fatalf("scenario %d of seed 7 differs between two generations:\n%s\n%s", i, a, b)
		}
	}
}
