//go:build !unix

package pluginhost

import "os"

// reraise ends the process as an interrupted one: without kill(2) the
// signal cannot be delivered again, so exit with the shell's code for it.
func reraise(os.Signal) { os.Exit(130) }
