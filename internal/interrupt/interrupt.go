// Package interrupt turns SIGINT and SIGTERM into context cancellation for
// abctl and conformance, alike: the first signal cancels the run's context
// (every call in flight returns at once, plugin processes are stopped on
// the way out) and the program exits 128+signal (130, 143), as a shell
// reports a process the signal ended; a second signal ends the program at
// once, after killing every plugin process group.
package interrupt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signal is the cause of a context cancelled by Notify.
type Signal struct {
	Sig syscall.Signal
}

func (s *Signal) Error() string {
	return fmt.Sprintf("interrupted by %s", name(s.Sig))
}

// Code is the exit code a shell reports for a process the signal ended.
func (s *Signal) Code() int { return 128 + int(s.Sig) }

func name(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// Code returns the exit code for a context Notify cancelled: 130 for
// SIGINT, 143 for SIGTERM; ok is false when no signal cancelled it.
func Code(ctx context.Context) (code int, ok bool) {
	var s *Signal
	if errors.As(context.Cause(ctx), &s) {
		return s.Code(), true
	}
	return 0, false
}

// Notify returns a context that the first SIGINT or SIGTERM cancels, with
// a *Signal as its cause. On a second signal force runs (it should kill
// what must not outlive the program) and the process exits at once with
// the second signal's code. stop ends the handling; while a second
// signal is being handled it waits for that exit, since force's kills can
// let the program's run return first and exit with the first signal's code.
func Notify(ctx context.Context, force func()) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	var mu sync.Mutex // held for good by a second signal's exit
	stopped := false
	go func() {
		select {
		case sig := <-ch:
			cancel(&Signal{Sig: sig.(syscall.Signal)})
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			s := &Signal{Sig: sig.(syscall.Signal)}
			fmt.Fprintf(os.Stderr, "%s again: stopping now\n", name(s.Sig))
			if force != nil {
				force()
			}
			os.Exit(s.Code())
		case <-done:
		}
	}()
	return ctx, func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}
