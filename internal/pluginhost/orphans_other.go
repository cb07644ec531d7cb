//go:build !linux

package pluginhost

// AdoptOrphans does nothing outside Linux: there is no child subreaper, so
// a process a plugin forks into a session or group of its own, and whose
// parent exits, is reparented to init (launchd on macOS) and survives the
// command (docs/limits.md). Killing the plugin's process group still stops
// every child that stayed in it.
func AdoptOrphans() error { return nil }

func sweep(int, bool) int { return 0 }

func groupAlive(int) bool { return false }
