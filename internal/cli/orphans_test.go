package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/proctest"
)

// sessionForker is this test binary serving a well-behaved plugin that
// first forks two processes out of its process group, as a daemonising
// plugin would (proctest.ForkSessions): a child in a session of its own
// that sleeps while the plugin runs, and a daemon's orphan (an
// intermediate in a new session forks the sleeper and exits at once).
// Killing the plugin's process group misses both.
const sessionForker = "session-forker"

func serveSessionForker() {
	serveForking(sessionForker, "Forks processes into sessions of their own", proctest.ForkSessions)
}

// A plugin that forks into sessions of its own leaves nothing running
// after dryrun or serve stop it (issue 26 item 10: before, 2 processes
// were left after each): abctl is the child subreaper of its plugins and
// kills what they leave reparented to it.
func TestSessionForkerNotLeaked(t *testing.T) {
	dir := sessionDir(t, false)
	chain := chainOf(t, sessionForker)
	// sleepers waits until both sleepers of the plugin's one start have
	// written their pid.
	sleepers := func(t *testing.T, pids string) {
		t.Helper()
		if _, err := proctest.WaitPids(pids, 2); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("dryrun", func(t *testing.T) {
		pids := filepath.Join(t.TempDir(), "pids")
		cmd := exec.Command(os.Args[0], "dryrun", "--chain", chain, "../../fixtures/inference/chat-stream.fixture", "--plugin-dir", dir)
		cmd.Env = append(os.Environ(), abctlEnv+"=1", proctest.PidsEnv+"="+pids)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("dryrun: %v\n%s", err, out)
		}
		sleepers(t, pids)
		if left := waitGone(t, dir); len(left) > 0 {
			proctest.KillAll(left)
			t.Fatalf("left running after dryrun: %v", left)
		}
	})
	t.Run("serve", func(t *testing.T) {
		pids := filepath.Join(t.TempDir(), "pids")
		cmd := exec.Command(os.Args[0], "serve", "--chain", chain, "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1:0", "--plugin-dir", dir)
		cmd.Env = append(os.Environ(), abctlEnv+"=1", proctest.PidsEnv+"="+pids)
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
		if left := waitGone(t, dir); len(left) > 0 {
			proctest.KillAll(left)
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
	t.Cleanup(func() { proctest.KillAll(pluginProcs(t, dir)) })
	return dir
}

// The orphan sweep never takes a plugin being started for an orphan: abctl
// (the child subreaper) describing every binary of a directory at once,
// session-forker among them, lists the same plugins as a host that sweeps
// nothing, and leaves nothing running. (A sweep that killed any child it
// had not registered yet killed plugins mid-describe.)
func TestCatalogDirSweepSparesStarts(t *testing.T) {
	dir := sessionDir(t, true)
	var notes string // what the last listing said on stderr
	list := func(sub bool) map[string]bool {
		args := []string{"catalog", "list", "--no-cache", "--describe-timeout", "1m", "--source", "dir:" + dir, "-o", "json"}
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
			notes = stderr.String()
		} else {
			opts := CatalogOptions()
			opts.CacheDir = "-"
			opts.DescribeTimeout = time.Minute // a hang guard: the plugins start at once, session-forker forks three copies of this -race binary first
			var o, e bytes.Buffer
			if code := Main(context.Background(), &App{Out: &o, Err: &e, Catalog: opts}, args); code != 0 {
				t.Fatalf("exit %d: %s", code, e.String())
			}
			out, notes = o.Bytes(), e.String()
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
		t.Fatalf("in-process listing %v; stderr:\n%s", want, notes)
	}
	// The in-process host is no subreaper: session-forker's sleepers
	// (running before its handshake) are left; end them.
	proctest.KillAll(pluginProcs(t, dir))
	waitGone(t, dir)
	for range 3 {
		got := list(true)
		for n := range want {
			if !got[n] {
				t.Errorf("%s not listed by abctl (lost mid-describe?): %v; stderr:\n%s", n, got, notes)
			}
		}
		if left := waitGone(t, dir); len(left) > 0 {
			proctest.KillAll(left)
			t.Fatalf("left running after catalog list: %v", left)
		}
	}
}
