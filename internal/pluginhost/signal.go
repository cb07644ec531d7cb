package pluginhost

import (
	"os"
	"os/signal"
	"syscall"
)

// CloseOnSignal makes SIGINT and SIGTERM (or the given signals) close every
// plugin the host loaded before the host process ends, so that no plugin
// process is left behind. After closing, the signal is delivered again with
// its default action, so the host ends as it would have without the
// handler. Call stop to remove the handler.
//
// A host killed with SIGKILL cannot clean up; go-plugin's server side then
// notices the broken connection only on its next call.
func (h *Host) CloseOnSignal(sigs ...os.Signal) (stop func()) {
	if len(sigs) == 0 {
		sigs = []os.Signal{os.Interrupt, syscall.SIGTERM}
	}
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case sig := <-ch:
			h.Close()
			signal.Reset(sigs...)
			reraise(sig)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
