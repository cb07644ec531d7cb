//go:build !unix

package pluginhost

import "os/exec"

// OwnProcessGroup is a no-op where process groups are not available.
func OwnProcessGroup(*exec.Cmd) {}

// KillProcessGroup kills the plugin process itself where process groups are not
// available.
func KillProcessGroup(cmd *exec.Cmd, reaped bool) {
	if cmd.Process != nil && !reaped {
		_ = cmd.Process.Kill()
	}
}
