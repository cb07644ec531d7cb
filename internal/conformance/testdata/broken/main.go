// Command broken serves one of the purpose-built broken plugins of package
// broken, chosen by the name the binary was built or linked as.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	if name == "forks-child" {
		forkChild()
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
