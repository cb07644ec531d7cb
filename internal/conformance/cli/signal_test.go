package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/proctest"
)

// SIGINT and SIGTERM alike stop a conformance run whose plugin hangs in a
// call (with a 10-minute case timeout, so only the signal can end it):
// the results so far are printed, no plugin process is left, and the exit
// code is 130 or 143.
func TestRunSignals(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process listing needs /proc")
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			if left := proctest.List(bin); len(left) > 0 {
				t.Fatalf("processes left by an earlier test: %v", left)
			}
			cmd := exec.Command(os.Args[0], "run", "--plugin", filepath.Join(bin, "hang"), "--timeout", "10m", "-p", "2")
			cmd.Env = append(os.Environ(), conformanceEnv+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			// The readiness cases hang; wait for plugin processes and give
			// the run a moment to reach them. Signalled earlier, the run
			// ends the same way.
			deadline := time.Now().Add(30 * time.Second)
			for len(proctest.List(bin)) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(time.Second)
			cmd.Process.Signal(tc.sig)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute): // hang guard, far below the case timeout
				t.Fatalf("conformance still running a minute after %s; stderr: %s", tc.sig, stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if left := proctest.WaitGone(bin); len(left) > 0 {
				t.Errorf("plugin processes left: %v", left)
			}
		})
	}
}
