//go:build unix && !linux

package pluginhost

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
