package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A plugin that forks into sessions of its own leaves nothing running
// after a green plugin-suite run (issue 26 item 10: before, 32 processes
// were left): conformance is the child subreaper of its plugins and kills
// what each leaves reparented to it.
func TestForkingSessionsLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the child subreaper is Linux's")
	}
	if left := procsFrom(t, bin); len(left) > 0 {
		t.Fatalf("processes left by an earlier test: %v", left)
	}
	pids := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(os.Args[0], "run", "--plugin", filepath.Join(bin, "forks-session"), "--isolation", "case", "--timeout", "1m")
	cmd.Env = append(os.Environ(), conformanceEnv+"=1", "ABKIT_BROKEN_CHILD_PIDS="+pids)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(pids)
	started := strings.Fields(string(data))
	if len(started) < 4 {
		t.Fatalf("only %d sleepers started: the plugin does not fork\n%s", len(started), out)
	}
	deadline := time.Now().Add(30 * time.Second) // hang guard, not a timing check
	for {
		left := procsFrom(t, bin)
		if len(left) == 0 {
			t.Logf("%d sleepers started, none left", len(started))
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			t.Fatalf("%d of %d sleepers left running: %v", len(left), len(started), left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
