package conformancetest_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/piiredactor"
	"github.com/abkit/abkit/internal/conformance/broken"
	"github.com/abkit/abkit/sdk/conformancetest"
)

// helperEnv makes TestHelperBroken run the suite over a broken plugin; the
// parent test re-executes this test binary with it and reads the outcome.
const helperEnv = "ABKIT_CONFORMANCETEST_HELPER"

// TestHelperBroken is not a test on its own: it does nothing unless
// TestBrokenPluginFails re-executes the test binary with helperEnv naming a
// broken plugin, and then it is that plugin's real `go test`.
func TestHelperBroken(t *testing.T) {
	name := os.Getenv(helperEnv)
	if name == "" {
		return
	}
	p, ok := broken.Plugins(func() { panic("dying on purpose") })[name]
	if !ok {
		t.Fatalf("no broken plugin %q", name)
	}
	var opts []conformancetest.Option
	// Cases whose in-process verdict on this plugin depends on scheduling
	// (broken.SkipInProcess) are left out, as the suite's own test does.
	for _, id := range broken.SkipInProcess[name] {
		opts = append(opts, conformancetest.Skip("^"+regexp.QuoteMeta(id)+"$"))
	}
	if k := os.Getenv(helperEnv + "_KNOWN"); k != "" {
		opts = append(opts, conformancetest.KnownFailing(strings.Split(k, ",")...))
	}
	conformancetest.Run(t, p, opts...)
}

func runHelper(t *testing.T, name, known string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBroken$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+name, helperEnv+"_KNOWN="+known)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestBrokenPluginFails runs `go test` (the re-executed test binary) over a
// plugin that keeps borrowed frames and whose result depends on chunking:
// the run must fail exactly its two cases, P19 and P24 (the frame poisoning
// is what catches P24), each reported with its rules and fix, and skip the
// family D and H cases with their reasons.
func TestBrokenPluginFails(t *testing.T) {
	out, err := runHelper(t, "chunk-dependent", "")
	if err == nil {
		t.Fatalf("the broken plugin's go test passed:\n%s", out)
	}
	want := broken.ExpectInProcess["chunk-dependent"]
	var failed []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if id, ok := strings.CutPrefix(l, "--- FAIL: TestHelperBroken/"); ok {
			failed = append(failed, strings.Fields(id)[0])
		}
	}
	wantIDs := map[string]bool{}
	for _, id := range want {
		wantIDs[strings.ReplaceAll(id, " ", "_")] = true
	}
	if len(failed) != len(want) {
		t.Errorf("failed subtests %v, want exactly %v\n%s", failed, want, out)
	}
	for _, id := range failed {
		if !wantIDs[id] {
			t.Errorf("subtest %s failed; only %v should\n%s", id, want, out)
		}
	}
	for _, s := range []string{"(rules P24", "What it checks and how to fix it:", "--- SKIP: TestHelperBroken/D", "does not serve family D"} {
		if !strings.Contains(out, s) {
			t.Errorf("the output lacks %q:\n%s", s, out)
		}
	}
}

// TestKnownFailing: the same plugin with both failing cases listed passes;
// with a stale entry (a case that passes) it fails, naming the entry.
func TestKnownFailing(t *testing.T) {
	known := strings.Join(broken.ExpectInProcess["chunk-dependent"], ",")
	if out, err := runHelper(t, "chunk-dependent", known); err != nil {
		t.Errorf("with its failures listed as known, go test failed: %v\n%s", err, out)
	}
	out, err := runHelper(t, "chunk-dependent", known+",P1/name/non-empty")
	if err == nil || !strings.Contains(out, "P1/name/non-empty is listed in KnownFailing but passed") {
		t.Errorf("a stale known-failing entry did not fail the run (err %v):\n%s", err, out)
	}
}

// TestExamplePasses runs the suite over an example plugin through the
// public API, the way its author does (P17, P24 and the rest).
func TestExamplePasses(t *testing.T) {
	conformancetest.Run(t, piiredactor.Plugin(), conformancetest.Skip(`^H`))
}
