package pluginhost

import "syscall"

// setParentDeathSignal has Linux kill the plugin process if its host dies
// without cleaning up (SIGKILL, a crash): otherwise the plugin, in a
// process group of its own, would outlive the host.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
