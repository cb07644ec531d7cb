package faults_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/conformance/faults"
	"github.com/abkit/abkit/internal/testbin"
)

// TestFaultCorpus runs the contract-fault corpus: every faulty plugin and
// runtime must be killed by a case citing its rule (or a monitor finding
// citing it), and every known miss must still be missed (a miss that is
// now killed is a stale entry: remove its Miss).
func TestFaultCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus starts a process per fault")
	}
	dir := t.TempDir()
	if err := testbin.Build(context.Background(), dir, faults.Packages...); err != nil {
		t.Fatal(err)
	}
	bad, err := faults.RunControls(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("the corpus harness fails on its own: %s", b)
	}
	vs, err := faults.Run(context.Background(), faults.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		switch {
		case v.Err != "":
			t.Errorf("%s %s (%s): the run failed: %s", v.Role, v.Name, v.Rule, v.Err)
		case !v.Expected() && v.Killed:
			t.Errorf("%s %s (%s) is listed as a known miss (%s) but was killed by %v: remove the entry", v.Role, v.Name, v.Rule, v.Miss, v.KilledBy)
		case !v.Expected():
			t.Errorf("%s %s (%s) survived: no failing case cites %s (%s); other failures: %v", v.Role, v.Name, v.Rule, v.Rule, v.Story, v.Other)
		case v.Miss != "":
			t.Logf("known miss: %s %s (%s): %s", v.Role, v.Name, v.Rule, v.Miss)
		default:
			t.Logf("killed: %s %s (%s) by %s in %v", v.Role, v.Name, v.Rule, strings.Join(v.KilledBy, ", "), v.Duration.Round(1e6))
		}
	}
	for _, s := range faults.Summarize(vs) {
		t.Logf("%s corpus: %d of %d faults killed (%.1f %%)", s.Role, s.Killed, s.Faults, s.Rate)
	}
}

var update = flag.Bool("update", false, "rewrite corpus.tsv")

// TestCorpusTable: corpus.tsv, the corpus as data (fault, the rule it
// breaks, its story), is the corpus; -update rewrites it. Every fault
// names one rule and a story.
func TestCorpusTable(t *testing.T) {
	got := faults.Table()
	if *update {
		if err := os.WriteFile("corpus.tsv", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("corpus.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("corpus.tsv is stale: run go test ./internal/conformance/faults -run TestCorpusTable -update")
	}
	seen := map[string]bool{}
	for _, f := range faults.Plugins() {
		if f.Rule == "" || f.Story == "" || seen["p"+f.Name] {
			t.Errorf("plugin fault %q: needs one rule, a story and a unique name", f.Name)
		}
		seen["p"+f.Name] = true
	}
	for _, f := range faults.Runtimes() {
		if f.Rule == "" || f.Story == "" || seen["r"+f.Name] {
			t.Errorf("runtime fault %q: needs one rule, a story and a unique name", f.Name)
		}
		seen["r"+f.Name] = true
	}
}
