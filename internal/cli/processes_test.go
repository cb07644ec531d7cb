package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/proctest"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

const (
	// forkerPlugin is this test binary serving a well-behaved plugin that
	// first starts a child (a copy of itself that sleeps) with its output
	// detached, as a plugin starting a helper or daemon would
	// (proctest.ForkChild), and exits normally when asked.
	forkerPlugin = "forker"
	// hangPlugin is this test binary serving a plugin whose OnRequest and
	// Shutdown never return. It creates the file $ABKIT_CLI_TEST_MARK.NAME
	// on entering each.
	hangPlugin = "hang-request"
	markEnv    = "ABKIT_CLI_TEST_MARK"
	graceEnv   = "ABKIT_CLI_TEST_GRACE"
)

func serveForker() {
	serveForking(forkerPlugin, "Starts a helper process and leaves it running", proctest.ForkChild)
}

// serveForking serves plugin name, passing everything through, after
// fork has left processes behind (or, in a forked copy, plays the copy's
// role: proctest.Role).
func serveForking(name, description string, fork func() error) {
	proctest.Role()
	if err := fork(); err != nil {
		panic(err)
	}
	sdk.Serve(sdk.Plugin{Name: name, Description: description,
		Pipeline: &gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) { return passThrough{name}, nil }}})
}

type passThrough struct{ name string }

func (p passThrough) Name() string { return p.name }
func (p passThrough) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Passes everything through"}
}
func (passThrough) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (passThrough) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

func mark(what string) {
	if m := os.Getenv(markEnv); m != "" {
		os.WriteFile(m+"."+what, nil, 0o644)
	}
}

type hanger struct{ passThrough }

func (hanger) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	mark("request")
	select {}
}

func (hanger) Shutdown(context.Context) error {
	mark("shutdown")
	select {}
}

func hangBundle() sdk.Plugin {
	return sdk.Plugin{Name: hangPlugin, Description: "Hangs in OnRequest and Shutdown",
		Pipeline: &gateway.Factory{Name: hangPlugin, New: func(json.RawMessage) (gateway.Plugin, error) { return hanger{passThrough{hangPlugin}}, nil }}}
}

func chainOf(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(p, []byte("outbound:\n  - name: "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitGone waits for every process running a binary from dir to be gone
// (bounded by proctest.Guard, a hang guard) and returns what is left.
func waitGone(t testing.TB, dir string) []string {
	t.Helper()
	skipNoProcs(t)
	return proctest.WaitGone(dir)
}

// A plugin that starts a child and then exits normally when the host
// stops it leaves nothing running: its whole process group is killed
// after it, from dryrun --plugin-dir and from the dir: describer.
func TestPluginChildNotLeaked(t *testing.T) {
	if left := pluginProcs(t, binDir); len(left) > 0 {
		t.Fatalf("processes left by an earlier test: %v", left)
	}
	t.Run("dryrun", func(t *testing.T) {
		code, _, errOut := runApp(context.Background(), nil, "dryrun", "--chain", chainOf(t, forkerPlugin), "../../fixtures/inference/chat-stream.fixture", "--plugin-dir", binDir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if left := waitGone(t, binDir); len(left) > 0 {
			t.Fatalf("left running after dryrun: %v", left)
		}
	})
	t.Run("describer", func(t *testing.T) {
		dir := t.TempDir()
		if err := copyExec(filepath.Join(binDir, forkerPlugin), filepath.Join(dir, forkerPlugin)); err != nil {
			t.Fatal(err)
		}
		opts := CatalogOptions()
		opts.CacheDir = "-"
		var o, e bytes.Buffer
		if code := Main(context.Background(), &App{Out: &o, Err: &e, Catalog: opts}, []string{"catalog", "list", "--source", "dir:" + dir}); code != 0 {
			t.Fatalf("exit %d: %s", code, e.String())
		}
		if !strings.Contains(o.String(), forkerPlugin) {
			t.Fatalf("forker not listed: %s", o.String())
		}
		if left := waitGone(t, dir); len(left) > 0 {
			t.Fatalf("left running after describing: %v", left)
		}
	})
}

// startHung starts abctl (this test binary in abctl mode, a 10-minute call
// timeout) on a chain whose plugin hangs in OnRequest, and returns once
// the call is hung.
func startHung(t *testing.T, grace string) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	if left := pluginProcs(t, binDir); len(left) > 0 {
		t.Fatalf("processes left by an earlier test: %v", left)
	}
	m := filepath.Join(t.TempDir(), "mark")
	cmd := exec.Command(os.Args[0], "dryrun", "--chain", chainOf(t, hangPlugin), "../../fixtures/inference/chat-stream.fixture", "--plugin-dir", binDir)
	cmd.Env = append(os.Environ(), abctlEnv+"=1", markEnv+"="+m, graceEnv+"="+grace)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFile(t, m+".request", &stderr)
	return cmd, &stderr, m
}

func waitFile(t *testing.T, path string, stderr *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // hang guard
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared; abctl stderr: %s", filepath.Base(path), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitExit waits for abctl to exit. The guard is a minute, far below the
// 10-minute call timeout: abctl ending before it proves the signal, not
// the timeout, ended the hung call.
func waitExit(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("abctl still running a minute after the signal: %s", stderr.String())
	}
	return cmd.ProcessState.ExitCode()
}

// SIGINT and SIGTERM alike cancel a plugin call that hangs (it does not
// wait for the call timeout), stop the plugin process and exit 130/143.
func TestDryrunSignalCancelsHungCall(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stderr, _ := startHung(t, "")
			cmd.Process.Signal(tc.sig)
			if code := waitExit(t, cmd, stderr); code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "dryrun interrupted: interrupted by "+tc.name) {
				t.Errorf("stderr %q does not say which signal interrupted the run", stderr.String())
			}
			if left := waitGone(t, binDir); len(left) > 0 {
				t.Errorf("plugin processes left after %s: %v", tc.name, left)
			}
		})
	}
}

// A second signal ends abctl at once, even while the first one's cleanup
// waits on a plugin hung in Shutdown (grace of 10 minutes here), and kills
// the plugin's process group on the way.
func TestDryrunSecondSignalKills(t *testing.T) {
	cmd, stderr, m := startHung(t, "10m")
	cmd.Process.Signal(syscall.SIGTERM)
	waitFile(t, m+".shutdown", stderr) // the first signal's cleanup is stuck
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, stderr); code != 130 {
		t.Errorf("exit %d, want 130 (the second signal's); stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "SIGINT again: stopping now") {
		t.Errorf("stderr %q", stderr.String())
	}
	if left := waitGone(t, binDir); len(left) > 0 {
		t.Errorf("plugin processes left after the second signal: %v", left)
	}
}
