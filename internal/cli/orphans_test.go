package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

const (
	// sessionForker is this test binary serving a well-behaved plugin
	// that first forks two processes out of its process group, as a
	// daemonising plugin would: a child in a session of its own (setsid)
	// that sleeps while the plugin runs, and a daemon (an intermediate in
	// a new session forks the sleeper and exits at once, so the sleeper is
	// orphaned while the plugin still runs). Killing the plugin's process
	// group misses both.
	sessionForker = "session-forker"
	sessionEnv    = "ABKIT_CLI_TEST_SESSION"      // "sleep" or "daemon": the role of a forked copy
	sessionPids   = "ABKIT_CLI_TEST_SESSION_PIDS" // a file each sleeper appends its pid to
)

func serveSessionForker() {
	switch os.Getenv(sessionEnv) {
	case "sleep":
		if f, err := os.OpenFile(os.Getenv(sessionPids), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
			f.Close()
		}
		os.NewFile(3, "ready").Write([]byte{1})
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	case "daemon":
		// The sleeper reports ready to the plugin through the pipe this
		// intermediate inherited; it does not wait.
		if err := forkSession("sleep", os.NewFile(3, "ready")); err != nil {
			panic(err)
		}
		os.Exit(0)
	}
	startSession("sleep")
	startSession("daemon")
	sdk.Serve(sdk.Plugin{Name: sessionForker, Description: "Forks processes into sessions of their own",
		Pipeline: &gateway.Factory{Name: sessionForker, New: func(json.RawMessage) (gateway.Plugin, error) { return passThrough{sessionForker}, nil }}})
}

// startSession forks a copy of this binary in role into a session of its
// own and waits until its sleeper has written its pid, so that the test
// knows which pids to look for however soon the host stops the plugin.
func startSession(role string) {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	if err := forkSession(role, w); err != nil {
		panic(err)
	}
	w.Close()
	r.Read(make([]byte, 1))
	r.Close()
}

func forkSession(role string, ready *os.File) error {
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), sessionEnv+"="+role)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	c.ExtraFiles = []*os.File{ready}
	return c.Start()
}

// A plugin that forks into sessions of its own leaves nothing running
// after dryrun or serve stop it (issue 26 item 10: before, 2 processes
// were left after each): abctl is the child subreaper of its plugins and
// kills what they leave reparented to it.
func TestSessionForkerNotLeaked(t *testing.T) {
	dir := sessionDir(t, false)
	chain := chainOf(t, sessionForker)
	// sleepers waits until both sleepers of the plugin's one start have
	// written their pid (a hang guard bounds it).
	sleepers := func(t *testing.T, pids string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			b, _ := os.ReadFile(pids)
			if n := len(strings.Fields(string(b))); n >= 2 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the plugin's sleepers never started (%q)", b)
			}
		}
	}
	t.Run("dryrun", func(t *testing.T) {
		pids := filepath.Join(t.TempDir(), "pids")
		cmd := exec.Command(os.Args[0], "dryrun", "--chain", chain, "../../fixtures/inference/chat-stream.fixture", "--plugin-dir", dir)
		cmd.Env = append(os.Environ(), abctlEnv+"=1", sessionPids+"="+pids)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("dryrun: %v\n%s", err, out)
		}
		sleepers(t, pids)
		if left := waitGoneFrom(t, dir); len(left) > 0 {
			killAll(left)
			t.Fatalf("left running after dryrun: %v", left)
		}
	})
	t.Run("serve", func(t *testing.T) {
		pids := filepath.Join(t.TempDir(), "pids")
		cmd := exec.Command(os.Args[0], "serve", "--chain", chain, "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1:0", "--plugin-dir", dir)
		cmd.Env = append(os.Environ(), abctlEnv+"=1", sessionPids+"="+pids)
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`on (http://\S+) -> `)
		for deadline := time.Now().Add(60 * time.Second); !re.MatchString(stderr.String()); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) { // hang guard
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("serve did not start: %s", stderr.String())
			}
		}
		sleepers(t, pids)
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if left := waitGoneFrom(t, dir); len(left) > 0 {
			killAll(left)
			t.Fatalf("left running after serve: %v\n%s", left, stderr.String())
		}
	})
}

// sessionDir returns a directory holding session-forker (a copy of this
// test binary) and, with all, links to every binary of binDir. It is
// never binDir: the in-process tests there have no subreaper, and
// session-forker's sleepers would outlive them.
func sessionDir(t *testing.T, all bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := copyExec(os.Args[0], filepath.Join(dir, sessionForker)); err != nil {
		t.Fatal(err)
	}
	if all {
		ents, err := os.ReadDir(binDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			from, to := filepath.Join(binDir, e.Name()), filepath.Join(dir, e.Name())
			if os.Link(from, to) != nil {
				if err := copyExec(from, to); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	t.Cleanup(func() { killAll(pluginProcs(t, dir)) })
	return dir
}

// waitGoneFrom is waitGone for the binaries of dir.
func waitGoneFrom(t *testing.T, dir string) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // hang guard: the wait ends when the last process is gone
	for {
		left := pluginProcs(t, dir)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killAll ends what a failed test left running, so that later tests start
// clean.
func killAll(procs []string) {
	for _, p := range procs {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// The orphan sweep never takes a plugin being started for an orphan: abctl
// (the child subreaper) describing every binary of a directory at once,
// session-forker among them, lists the same plugins as a host that sweeps
// nothing, and leaves nothing running. (A sweep that killed any child it
// had not registered yet killed plugins mid-describe.)
func TestCatalogDirSweepSparesStarts(t *testing.T) {
	dir := sessionDir(t, true)
	list := func(sub bool) map[string]bool {
		args := []string{"catalog", "list", "--no-cache", "--source", "dir:" + dir, "-o", "json"}
		var out []byte
		var err error
		if sub {
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), abctlEnv+"=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err = cmd.Output()
			if err != nil {
				t.Fatalf("abctl: %v\n%s", err, stderr.String())
			}
		} else {
			opts := CatalogOptions()
			opts.CacheDir = "-"
			var o, e bytes.Buffer
			if code := Main(context.Background(), &App{Out: &o, Err: &e, Catalog: opts}, args); code != 0 {
				t.Fatalf("exit %d: %s", code, e.String())
			}
			out = o.Bytes()
		}
		var got struct {
			Plugins []catalog.Descriptor `json:"plugins"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v in %s", err, out)
		}
		names := map[string]bool{}
		for _, d := range got.Plugins {
			if d.Origin.Path != "" {
				names[d.Name] = true
			}
		}
		return names
	}
	want := list(false)
	if !want[sessionForker] || len(want) < 5 {
		t.Fatalf("in-process listing %v", want)
	}
	// The in-process host is no subreaper: session-forker's sleepers
	// (running before its handshake) are left; end them.
	killAll(pluginProcs(t, dir))
	waitGoneFrom(t, dir)
	for range 3 {
		got := list(true)
		for n := range want {
			if !got[n] {
				t.Errorf("%s not listed by abctl (lost mid-describe?): %v", n, got)
			}
		}
		if left := waitGoneFrom(t, dir); len(left) > 0 {
			killAll(left)
			t.Fatalf("left running after catalog list: %v", left)
		}
	}
}
