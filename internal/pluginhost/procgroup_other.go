//go:build !unix

package pluginhost

import "os/exec"

// ownGroup is a no-op where process groups are not available.
func ownGroup(*exec.Cmd) {}

// killGroup kills the plugin process itself where process groups are not
// available.
func killGroup(cmd *exec.Cmd, reaped bool) {
	if cmd.Process != nil && !reaped {
		_ = cmd.Process.Kill()
	}
}
