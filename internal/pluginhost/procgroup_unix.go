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
	setParentDeathSignal(cmd.SysProcAttr)
}

// KillProcessGroup kills the process group that OwnProcessGroup gave cmd:
// the plugin and everything it started that stayed in its group. It is
// called whether or not the plugin (the group's leader) has exited and
// been reaped: a plugin that started a child and then exited normally
// leaves the child running in the group. The group's ID cannot name
// another group meanwhile: a process group ID stays allocated while any
// member lives, and once none does the kill finds nothing (ESRCH).
func KillProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	killGroup(cmd.Process.Pid)
}

func killGroup(pgid int) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
