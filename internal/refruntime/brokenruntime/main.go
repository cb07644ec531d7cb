// Command brokenruntime is the reference runtime with one deliberate bug
// (see refruntime.Bugs), for the conformance self-test. It is one binary
// for every bug: it picks the bug by the name it was built or linked as
// (fifo-finish, warn-twice, …), as the broken plugins do, so the
// self-test links it under each bug's name (runtimesuite.ImplsIn).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/abkit/abkit/internal/refruntime"
)

func main() {
	name := refruntime.Bug(strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe"))
	if _, ok := refruntime.Bugs[name]; !ok {
		fmt.Fprintf(os.Stderr, "brokenruntime: no bug named %q: link this binary under a bug's name (refruntime.Bugs)\n", name)
		os.Exit(2)
	}
	refruntime.Main(refruntime.Options{Bug: name})
}
