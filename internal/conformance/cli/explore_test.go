package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunExplore: the reference explored against itself exits 0; a broken
// runtime (fifo-finish) exits 1 with a shrunk scenario written to
// --artifacts, which --scenario replays to a difference.
func TestRunExplore(t *testing.T) {
	ref := filepath.Join(bin, "abkit-runtime")
	code, out, errs := run(t, "run", "--runtime", ref, "--reference", ref, "--explore", "20", "--seed", "24")
	if code != ExitOK || !strings.Contains(out, "0 differences") {
		t.Fatalf("reference: exit %d\n%s%s", code, out, errs)
	}
	dir := t.TempDir()
	code, out, errs = run(t, "run", "--runtime", filepath.Join(bin, "fifo-finish"), "--reference", ref, "--explore", "30", "--seed", "24", "--artifacts", dir)
	if code != ExitFail || !strings.Contains(out, "shrunk from") {
		t.Fatalf("fifo-finish: exit %d; want 1 with a shrunk difference\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "conformance-explore-24-*.json"))
	if len(files) == 0 {
		t.Fatalf("no scenario file in %s", dir)
	}
	code, out, errs = run(t, "run", "--runtime", filepath.Join(bin, "fifo-finish"), "--reference", ref, "--scenario", files[0])
	if code != ExitFail || !strings.Contains(out, "first differing event") {
		t.Errorf("replay: exit %d; want 1 with the difference\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(files[0]); err != nil {
		t.Error(err)
	}
}

// TestRunExploreUsage: exploration needs a runtime, and its flags go with
// it.
func TestRunExploreUsage(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--plugin", "x", "--scenario", "s.json"},
		{"run", "--runtime", "x", "--seed", "3"},
		{"run", "--runtime", "x", "--explore", "-1", "--reference", "y"},
	} {
		if code, _, errs := run(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
}
