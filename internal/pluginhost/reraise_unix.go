//go:build unix

package pluginhost

import (
	"os"
	"syscall"
)

// reraise delivers sig to this process again, with its default action
// restored by the caller, so the process ends as the signal asks.
func reraise(sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(os.Getpid(), s)
	}
}
