//go:build !unix

package pluginhost

import (
	"os"
	"os/exec"
)

// OwnProcessGroup is a no-op where process groups are not available.
func OwnProcessGroup(*exec.Cmd) {}

// KillProcessGroup kills the plugin process itself where process groups are not
// available.
func KillProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
