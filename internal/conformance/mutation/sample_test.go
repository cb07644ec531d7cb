package mutation

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// TestSample runs a small fixed sample of mutants through the whole
// harness (enumerate, overlay build, suite run, confirmation) so CI keeps
// it working, and fails when a mutant the suites caught survives.
func TestSample(t *testing.T) {
	root := moduleRoot(t)
	f, err := os.Open(filepath.Join("testdata", "sample.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]Verdict{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		want[k] = Verdict(strings.TrimSpace(v))
		order = append(order, k)
	}
	targets := RuntimeTargets()
	pt, err := PluginTargets(root)
	if err != nil {
		t.Fatal(err)
	}
	all, err := Enumerate(root, append(targets, pt...))
	if err != nil {
		t.Fatal(err)
	}
	eq, err := LoadEquivalent(filepath.Join(root, "internal", "conformance", "mutation", "equivalent.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if stale := eq.Stale(all); len(stale) > 0 {
		t.Errorf("equivalent.txt names mutants that no longer exist; review them:\n%s", strings.Join(stale, "\n"))
	}
	byKey := map[string]*Mutant{}
	for _, m := range all {
		byKey[m.Key] = m
	}
	var ms []*Mutant
	for _, k := range order {
		m, ok := byKey[k]
		if !ok {
			t.Errorf("testdata/sample.txt: %s names no mutant (the code changed); pick another with 'conformance mutate --list'", k)
			continue
		}
		ms = append(ms, m)
	}
	if t.Failed() {
		return
	}
	// A generous hang guard; the sample takes seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rs, err := Run(ctx, ms, Options{Root: root, Equivalent: eq, NoReference: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		w := want[r.Key]
		switch {
		case w == Killed && r.Verdict != Killed:
			t.Errorf("%s %s (%s): %s; the suites caught it before: a regression (%s)", r.Pos(), r.Key, r.Desc, r.Verdict, r.Reason)
		case w == Equivalent && r.Verdict != Equivalent:
			t.Errorf("%s: %s; want it listed in equivalent.txt", r.Key, r.Verdict)
		case w != Killed && w != Equivalent:
			t.Errorf("testdata/sample.txt: %s: verdict %q; want killed or equivalent", r.Key, w)
		default:
			t.Logf("%s %s: %s %s", r.Pos(), r.Desc, r.Verdict, r.KilledBy)
		}
	}
}
