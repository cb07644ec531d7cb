package pluginhost_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/pluginhost"
)

// hostEnv switches the re-executed test binary into a plugin host: it loads
// the plugin binary named by the variable through a Host with
// CloseOnSignal, prints "pid <plugin pid>" on stdout and waits.
const hostEnv = "ABKIT_PLUGINHOST_HOST"

func runHost(path string) {
	h := pluginhost.NewHost(pluginhost.Options{})
	h.CloseOnSignal()
	p, err := h.Load(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "host: load:", err)
		os.Exit(3)
	}
	fmt.Printf("pid %d\n", p.Pid())
	select {}
}

// procState is the state letter of pid from /proc ("Z" for a zombie), or ""
// when the process does not exist.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The state follows the parenthesised command name.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return "?"
}

// SIGTERM or SIGINT to a host process closes its plugins before the host
// ends: within a bounded time the host has exited, with the signal's
// default action, and the plugin process no longer exists (not even as a
// zombie).
func TestSignalLeavesNoPlugin(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			host := exec.Command(self, "-test.run=^$")
			host.Env = append(os.Environ(), hostEnv+"="+bin("mcp-parser"))
			var stderr strings.Builder
			host.Stderr = &stderr
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			pidc := make(chan int, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if f, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
						n, _ := strconv.Atoi(f)
						pidc <- n
					}
				}
				exited <- host.Wait()
			}()
			var pid int
			select {
			case pid = <-pidc:
			case err := <-exited:
				t.Fatalf("host exited before loading the plugin: %v\n%s", err, stderr.String())
			case <-time.After(10 * time.Second):
				host.Process.Kill()
				t.Fatalf("host did not load the plugin within 10s\n%s", stderr.String())
			}
			if pid <= 0 || procState(pid) == "" {
				host.Process.Kill()
				t.Fatalf("plugin pid %d is not a running process", pid)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // only if the test fails

			t0 := time.Now()
			if err := host.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				// The host re-raises the signal after closing, so it ends
				// as it would have without the handler.
				ee, ok := err.(*exec.ExitError)
				if !ok {
					t.Fatalf("host exit: %v, want death by %v", err, sig)
				}
				ws := ee.Sys().(syscall.WaitStatus)
				if !ws.Signaled() || ws.Signal() != sig {
					t.Errorf("host ended with %v, want death by %v\n%s", ee, sig, stderr.String())
				}
			case <-time.After(5 * time.Second):
				host.Process.Kill()
				t.Fatalf("host still running 5s after %v", sig)
			}
			// The host reaps the plugin before it re-raises the signal: the
			// plugin must be gone the moment the host is.
			if st := procState(pid); st != "" {
				t.Fatalf("plugin process %d left behind (state %s) after %v to the host; host took %v",
					pid, st, sig, time.Since(t0))
			}
			t.Logf("host and plugin gone %v after %v", time.Since(t0), sig)
		})
	}
}

// A load that finishes after the host closed (a signal arrived mid-load)
// stops its plugin instead of leaving it untracked.
func TestHostLoadAfterClose(t *testing.T) {
	h := pluginhost.NewHost(pluginhost.Options{})
	p, err := h.Load(context.Background(), bin("mcp-parser"))
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if !gone(p.Pid()) {
		t.Fatalf("plugin %d still running after Host.Close", p.Pid())
	}
	if _, err := h.Load(context.Background(), bin("mcp-parser")); !errors.Is(err, pluginhost.ErrHostClosed) {
		t.Fatalf("load after close: %v, want ErrHostClosed", err)
	}
}
