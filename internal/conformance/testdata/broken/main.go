// Command broken serves one of the purpose-built broken plugins of package
// broken, chosen by the name the binary was built or linked as.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/abkit/abkit/internal/conformance/broken"
	"github.com/abkit/abkit/sdk"
)

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	p, ok := broken.Plugins(func() {
		fmt.Fprintln(os.Stderr, "crash-mid-stream: dying on purpose at frame", broken.CrashAt)
		os.Exit(3)
	})[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "broken: no broken plugin named %q\n", name)
		os.Exit(2)
	}
	switch name {
	case "forks-child":
		forkChild()
	case "forks-session":
		forkSessions()
	}
	sdk.Serve(p)
}

// ChildEnv makes the binary the helper forks-child starts: it sleeps. When
// PidsEnv names a file, forks-child appends the helper's pid to it.
const (
	childEnv = "ABKIT_BROKEN_CHILD"
	pidsEnv  = "ABKIT_BROKEN_CHILD_PIDS"
)

// forkChild starts a copy of this binary that sleeps, with its output
// detached (so nothing holds the plugin's pipes open), in the plugin's
// process group: a helper or daemon a plugin leaves behind.
func forkChild() {
	if os.Getenv(childEnv) == "1" {
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), childEnv+"=1")
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "forks-child:", err)
		os.Exit(2)
	}
	if f := os.Getenv(pidsEnv); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(fh, c.Process.Pid)
			fh.Close()
		}
	}
}

// sessionEnv gives a copy forks-session starts its role: "sleep" (append
// the pid to PidsEnv, report ready on fd 3, sleep) or "daemon" (fork the
// sleeper into this new session and exit at once, orphaning it).
const sessionEnv = "ABKIT_BROKEN_SESSION"

// forkSessions forks, out of the plugin's process group, a sleeper in a
// session of its own and a daemon, and waits until both sleepers have
// written their pid: what a daemonising plugin leaves behind.
func forkSessions() {
	switch os.Getenv(sessionEnv) {
	case "sleep":
		if f := os.Getenv(pidsEnv); f != "" {
			if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(fh, os.Getpid())
				fh.Close()
			}
		}
		os.NewFile(3, "ready").Write([]byte{1})
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	case "daemon":
		if err := forkSession("sleep", os.NewFile(3, "ready")); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	for _, role := range []string{"sleep", "daemon"} {
		r, w, err := os.Pipe()
		if err == nil {
			err = forkSession(role, w)
			w.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "forks-session:", err)
			os.Exit(2)
		}
		r.Read(make([]byte, 1))
		r.Close()
	}
}

func forkSession(role string, ready *os.File) error {
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), sessionEnv+"="+role)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	c.ExtraFiles = []*os.File{ready}
	return c.Start()
}
