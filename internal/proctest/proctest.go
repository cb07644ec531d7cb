// Package proctest is what the tests that run plugins and runtimes as real
// processes share to show that nothing is left running: the processes a
// directory's binaries run (read from /proc), a bounded wait for them to be
// gone, and the roles of a test binary that leaves processes behind on
// purpose (a helper in its process group, a sleeper in a session of its
// own, a daemon that orphans one). It does not import package testing, so
// test plugins and runtimes built as ordinary binaries use it too.
package proctest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Supported reports whether processes can be listed here (/proc: Linux).
// Tests that list them skip elsewhere.
func Supported() bool { return runtime.GOOS == "linux" }

// List returns the live (not zombie) processes running a binary from dir,
// each as "PID PATH".
func List(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || !strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			s := string(st)
			if i := strings.LastIndexByte(s, ')'); i >= 0 && strings.HasPrefix(s[i:], ") Z") {
				continue
			}
		}
		out = append(out, e.Name()+" "+exe)
	}
	return out
}

// Guard bounds every wait of this package: a hang guard, not a timing
// check (a process still there after it has leaked).
const Guard = 30 * time.Second

// WaitGone waits until no process runs a binary from dir, for at most
// Guard, and returns what is left (nil when none is).
func WaitGone(dir string) []string {
	deadline := time.Now().Add(Guard)
	for {
		left := List(dir)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// KillAll kills the processes List returned, so that what a failed test
// left running does not disturb the next.
func KillAll(procs []string) {
	for _, p := range procs {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// WaitPids waits until file lists at least n pids (the sleepers write
// theirs there), for at most Guard, and returns them.
func WaitPids(file string, n int) ([]string, error) {
	deadline := time.Now().Add(Guard)
	for {
		b, _ := os.ReadFile(file)
		pids := strings.Fields(string(b))
		if len(pids) >= n {
			return pids, nil
		}
		if time.Now().After(deadline) {
			return pids, fmt.Errorf("%s lists %d pids, want %d: the processes never started", file, len(pids), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const (
	// RoleEnv gives a copy of the binary its role: "child" (sleep),
	// "sleep" (append its pid to PidsEnv's file, report ready on fd 3,
	// sleep) or "daemon" (fork a sleeper into the new session it was
	// started in, and exit at once, orphaning it).
	RoleEnv = "ABKIT_PROCTEST_ROLE"
	// PidsEnv names a file every forked process appends its pid to.
	PidsEnv = "ABKIT_PROCTEST_PIDS"
)

// sleepFor is how long a forked process lives unless killed: far longer
// than any test, so that one still there has leaked.
const sleepFor = 10 * time.Minute

// Role runs the role RoleEnv gives this process, and does not return if it
// has one; it returns at once in the process that is to fork. A binary
// that forks with ForkChild or ForkSessions calls it first thing.
func Role() {
	switch os.Getenv(RoleEnv) {
	case "child":
		time.Sleep(sleepFor)
		os.Exit(0)
	case "sleep":
		_ = appendPid(os.Getpid())
		_, _ = os.NewFile(3, "ready").Write([]byte{1})
		time.Sleep(sleepFor)
		os.Exit(0)
	case "daemon":
		// The sleeper reports ready through the pipe this intermediate
		// inherited; it does not wait.
		if err := forkSession("sleep", os.NewFile(3, "ready")); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
}

// ForkChild starts a copy of this binary that sleeps in this process's
// group, with its output detached (so nothing holds the parent's pipes
// open): a helper a plugin leaves behind. Its pid goes to PidsEnv's file.
func ForkChild() error {
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), RoleEnv+"=child")
	if err := c.Start(); err != nil {
		return fmt.Errorf("starting the helper: %w", err)
	}
	return appendPid(c.Process.Pid)
}

// ForkSessions forks, out of this process's group, a sleeper in a session
// of its own and a daemon (an intermediate in a new session that forks
// the sleeper and exits at once, so the sleeper is orphaned while this
// process still runs), and returns once both sleepers have written their
// pid, so a test knows which to look for however soon the host stops this
// process. Killing this process's group misses both.
func ForkSessions() error {
	for _, role := range []string{"sleep", "daemon"} {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		err = forkSession(role, w)
		w.Close()
		if err == nil {
			_, err = r.Read(make([]byte, 1))
		}
		r.Close()
		if err != nil {
			return fmt.Errorf("forking the %s: %w", role, err)
		}
	}
	return nil
}

func forkSession(role string, ready *os.File) error {
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), RoleEnv+"="+role)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	c.ExtraFiles = []*os.File{ready}
	return c.Start()
}

// appendPid appends pid to PidsEnv's file, if it names one.
func appendPid(pid int) error {
	name := os.Getenv(PidsEnv)
	if name == "" {
		return nil
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", PidsEnv, err)
	}
	_, err = fmt.Fprintln(f, pid)
	return errors.Join(err, f.Close())
}
