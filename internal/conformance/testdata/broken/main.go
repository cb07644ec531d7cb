// Command broken serves one of the purpose-built broken plugins of package
// broken, chosen by the name the binary was built or linked as.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/abkit/abkit/internal/conformance/broken"
	"github.com/abkit/abkit/internal/proctest"
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
	// forks-child leaves a helper in its process group, forks-session a
	// sleeper in a session of its own and a daemon's orphan; each writes
	// their pids to $ABKIT_PROCTEST_PIDS.
	var err error
	switch name {
	case "forks-child":
		proctest.Role()
		err = proctest.ForkChild()
	case "forks-session":
		proctest.Role()
		err = proctest.ForkSessions()
	case "escape-stdout":
		// Before the handshake line: the host quotes it in its error.
		_, err = os.Stdout.WriteString(broken.Escapes + "\n")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	sdk.Serve(p)
}
