package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// abctl record exits 3 when an exchange it relayed could not be written,
// and says how many (issue 26 item 9: with a full disk, 30 of 40 were
// lost with exit 0 and a summary of "10 recorded"). Its --out directory
// is removed under it, which fails each write as a full disk does.
func TestRecordLostExchangesExitNonZero(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true}`)
	}))
	defer up.Close()
	out := filepath.Join(t.TempDir(), "out")
	cmd, stderr, base := startRecord(t, up.URL, out)
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		resp, err := http.Get(base + "/v1/json")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute): // hang guard
		t.Fatalf("abctl record still running a minute after SIGINT: %s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitRead || !strings.Contains(stderr.String(), "0 exchange(s) recorded, 3 NOT recorded") {
		t.Errorf("exit %d, want %d saying 3 were not recorded; stderr:\n%s", code, ExitRead, stderr.String())
	}
}

// startRecord starts abctl record (this test binary as cmd/abctl runs) in
// front of upstream, writing to out, and returns once it listens, with its
// stderr and its address. The process is killed when the test ends.
func startRecord(t *testing.T, upstream, out string) (*exec.Cmd, *lockedBuffer, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "record", "--upstream", upstream, "--listen", "127.0.0.1:0", "--out", out)
	cmd.Env = append(os.Environ(), abctlEnv+"=1")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	addr := regexp.MustCompile(`recording on (http://\S+);`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) { // hang guard
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			return cmd, stderr, m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("abctl record did not start: %s", stderr.String())
		}
	}
}
