package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/cli"
)

// startDebug starts a plugin binary the way a user does under a debugger
// (ABKIT_PLUGIN_DEBUG=1), reads the reattach config it prints, writes it to
// a file and returns the file and the process. The process is killed in
// cleanup.
func startDebug(t *testing.T, bin string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "ABKIT_PLUGIN_DEBUG=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	var cfg string
	select {
	case cfg = <-line:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s printed no reattach config within 10s; stderr:\n%s", bin, stderr.String())
	}
	if !strings.HasPrefix(cfg, "{") {
		t.Fatalf("%s printed %q, want the reattach config JSON; stderr:\n%s", bin, cfg, stderr.String())
	}
	file := filepath.Join(t.TempDir(), "reattach.json")
	if err := os.WriteFile(file, []byte(cfg+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, cmd
}

func alive(cmd *exec.Cmd) bool {
	return cmd.ProcessState == nil && cmd.Process.Signal(syscall.Signal(0)) == nil
}

// TestReattachRunsSuiteAndLeavesProcess starts a real example binary in
// debug mode, runs the whole plugin suite against it with
// `conformance run --reattach`, and checks that the run passes, says it
// used one shared process, skipped the case needing a second process (P2)
// and left the user's process running.
func TestReattachRunsSuiteAndLeavesProcess(t *testing.T) {
	file, cmd := startDebug(t, filepath.Join(binDir, "guardrail"))
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), &cli.App{Out: &out, Err: &errb}, []string{"run", "--reattach", file, "-v"})
	if code != cli.ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"suite isolation", "note: --reattach: every case runs against the one process you started",
		"SKIP          P2/capabilities/across-processes  (the case needs a second plugin process"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(out.String(), "PASS          P21/") {
		t.Errorf("no P21 case passed; did the suite run at all?\n%s", out.String())
	}
	time.Sleep(200 * time.Millisecond) // a kill would have landed by now
	if !alive(cmd) {
		t.Fatal("the plugin process the user started is gone after the run: reattach must only disconnect")
	}
	// A second run against the same process works too: nothing was shut down.
	out.Reset()
	if code := cli.Main(context.Background(), &cli.App{Out: &out, Err: &errb}, []string{"run", "--reattach", file, "--run", "^P1"}); code != cli.ExitOK {
		t.Fatalf("second run: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// TestReattachUsage: asking for per-case isolation with --reattach is a
// usage error (exit 2) that says why; a config without an address is too.
func TestReattachUsage(t *testing.T) {
	file, _ := startDebug(t, filepath.Join(binDir, "guardrail"))
	var out, errb bytes.Buffer
	if code := cli.Main(context.Background(), &cli.App{Out: &out, Err: &errb}, []string{"run", "--reattach", file, "--isolation", "case"}); code != cli.ExitUsage {
		t.Errorf("--isolation case with --reattach: exit %d, want %d", code, cli.ExitUsage)
	}
	if !strings.Contains(errb.String(), "only the one you started") {
		t.Errorf("stderr does not say why: %s", errb.String())
	}
	if _, err := conformance.ParseReattach(`{"Protocol":"grpc","Pid":1}`); err == nil || !strings.Contains(err.Error(), "ABKIT_PLUGIN_DEBUG") {
		t.Errorf("a config without an address: %v", err)
	}
	named, err := conformance.ParseReattach(`{"guardrail":{"Protocol":"grpc","ProtocolVersion":1,"Addr":{"Network":"unix","String":"/tmp/x"},"Pid":7}}`)
	if err != nil || named.Pid != 7 || named.Addr.String != "/tmp/x" {
		t.Errorf("a named config: %+v, %v", named, err)
	}
}

// TestReattachToDeadProcess: a config whose process is gone fails to load
// (exit 3) with an error naming the address, within a bound.
func TestReattachToDeadProcess(t *testing.T) {
	file, cmd := startDebug(t, filepath.Join(binDir, "guardrail"))
	cmd.Process.Kill()
	cmd.Wait()
	var out, errb bytes.Buffer
	start := time.Now()
	code := cli.Main(context.Background(), &cli.App{Out: &out, Err: &errb}, []string{"run", "--reattach", file})
	if code != cli.ExitLoad {
		t.Errorf("exit %d, want %d; stderr: %s", code, cli.ExitLoad, errb.String())
	}
	if !strings.Contains(errb.String(), "reattach:unix:") {
		t.Errorf("the error does not name the reattach address: %s", errb.String())
	}
	if d := time.Since(start); d > time.Minute { // hang guard
		t.Errorf("took %v", d)
	}
}
