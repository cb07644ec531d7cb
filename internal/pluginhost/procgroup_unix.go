//go:build unix

package pluginhost

import (
	"os/exec"
	"syscall"
)

// OwnProcessGroup starts cmd in a process group of its own, so that killing the
// plugin also kills what it started (a wrapper script's interpreter or
// child). Those children hold the plugin's stdout and stderr open, and
// go-plugin reads both to EOF before it reaps; killing only the leader
// would leave them running and block the reap until they exit.
func OwnProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// KillProcessGroup kills the process group that OwnProcessGroup gave cmd, unless reaped
// says the leader has been reaped already (its group ID may then be reused).
func KillProcessGroup(cmd *exec.Cmd, reaped bool) {
	if cmd.Process == nil || reaped {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
