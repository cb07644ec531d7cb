package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/abkit/abkit/internal/proctest"
	"github.com/abkit/abkit/internal/refruntime"
)

// sessionRuntime is this test binary serving abkit's reference runtime
// after forking, out of its process group, a sleeper in a session of its
// own and a daemon's orphan (proctest.ForkSessions), as a daemonising
// runtime would.
const sessionRuntime = "forks-session-runtime"

func serveSessionRuntime() {
	proctest.Role()
	if err := proctest.ForkSessions(); err != nil {
		os.Stderr.WriteString(sessionRuntime + ": " + err.Error() + "\n")
		os.Exit(2)
	}
	refruntime.Main(refruntime.Options{})
}

// A plugin or a runtime that forks into sessions of its own leaves nothing
// running after a green run of its suite (issue 26 item 10: before, 32
// processes were left after the plugin suite, 4 after the runtime suite):
// conformance is the child subreaper of what it starts and kills what
// each leaves reparented to it. The runtime cases run two at a time, so
// sleepers are orphaned while another runtime is running, and are killed
// once none is (or at exit).
func TestForkingSessionsLeavesNothing(t *testing.T) {
	if !proctest.Supported() {
		t.Skip("the child subreaper is Linux's")
	}
	t.Run("plugin", func(t *testing.T) {
		runLeavesNothing(t, bin, "--plugin", filepath.Join(bin, "forks-session"), "--isolation", "case")
	})
	t.Run("runtime", func(t *testing.T) {
		// A directory of its own: the sleepers are copies of this test
		// binary, which the other tests do not run from bin.
		dir := t.TempDir()
		rt := filepath.Join(dir, sessionRuntime)
		if err := linkOrCopy(os.Args[0], rt); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { proctest.KillAll(proctest.List(dir)) })
		runLeavesNothing(t, dir, "--runtime", rt, "--run", "^P15/order/", "-p", "2")
	})
}

// runLeavesNothing runs conformance (this test binary as cmd/conformance
// runs, subreaper included) with args, expects a green run that forked at
// least four sleepers, and no process left from a binary of dir.
func runLeavesNothing(t *testing.T, dir string, args ...string) {
	t.Helper()
	if left := proctest.List(dir); len(left) > 0 {
		t.Fatalf("processes left by an earlier test: %v", left)
	}
	pids := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(os.Args[0], append([]string{"run", "--timeout", "1m"}, args...)...)
	cmd.Env = append(os.Environ(), conformanceEnv+"=1", proctest.PidsEnv+"="+pids)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out)
	}
	started, err := proctest.WaitPids(pids, 4)
	if err != nil {
		t.Fatalf("%v: the subject does not fork\n%s", err, out)
	}
	if left := proctest.WaitGone(dir); len(left) > 0 {
		proctest.KillAll(left)
		t.Fatalf("%d of %d sleepers left running: %v", len(left), len(started), left)
	}
	t.Logf("%d sleepers started, none left", len(started))
}

// linkOrCopy hard-links from to to, or copies it (an executable) across
// file systems.
func linkOrCopy(from, to string) error {
	if os.Link(from, to) == nil {
		return nil
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}
