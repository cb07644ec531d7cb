package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/conformance/mutation"
)

// A recorded kill rate is a floor: --record refuses to write a lower one.
func TestRecordedKillRateIsAFloor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killrates.json")
	rec := func(plugin float64) *mutation.Record {
		return &mutation.Record{Command: "c", Date: "2026-11-30", Summaries: []mutation.Summary{
			{Suite: "runtime", Mutants: 10, Killed: 9, Survived: 1, Rate: 90},
			{Suite: "plugin", Mutants: 10, Killed: int(plugin / 10), Survived: 10 - int(plugin/10), Rate: plugin},
		}}
	}
	if err := notLower(path, rec(50)); err != nil {
		t.Fatalf("no recorded file: %v; want any figure accepted", err)
	}
	if err := rec(90).Write(path); err != nil {
		t.Fatal(err)
	}
	if err := notLower(path, rec(90)); err != nil {
		t.Errorf("the same figures: %v", err)
	}
	if err := notLower(path, rec(100)); err != nil {
		t.Errorf("a higher plugin rate: %v", err)
	}
	err := notLower(path, rec(80))
	if err == nil || !strings.Contains(err.Error(), "plugin suite 80.0 % (recorded 90.0 %") || !strings.Contains(err.Error(), "--allow-lower") {
		t.Errorf("a lower plugin rate: %v; want it refused, naming the suite, both figures and --allow-lower", err)
	}
}
