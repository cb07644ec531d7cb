package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/abkit/abkit/internal/trace"
)

// ErrAbandoned marks a Shutdown or OnFinish call that overran its deadline
// (plus Options.Grace) and was abandoned: the runtime went on without it.
var ErrAbandoned = errors.New("abandoned after overrunning its deadline")

// PluginError is a lifecycle or finish failure of one plugin.
type PluginError struct {
	Plugin string
	// Hook is trace.HookInit, HookShutdown or HookOnFinish.
	Hook string
	// Rule is the contract rule that governs the failure (P12, P13, P30).
	Rule string
	Err  error
}

func (e *PluginError) Error() string {
	return fmt.Sprintf("%s: plugin %q: %s: %v", e.Rule, e.Plugin, e.Hook, e.Err)
}

func (e *PluginError) Unwrap() error { return e.Err }

// Start calls Init exactly once on each plugin that has it, in declaration
// order (P12). The first error (or panic) stops start-up: later plugins'
// Init is not called, and the returned *PluginError names the plugin.
// Calling Start again returns an error and calls nothing.
func (c *Chain) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("pipeline: chain already started; Start runs once")
	}
	c.started = true
	for i := range c.plugins {
		pl := &c.plugins[i]
		if pl.init == nil {
			c.startedN = i + 1
			continue
		}
		t0 := c.opts.Trace.Now()
		err := callInit(ctx, pl)
		ev := trace.Event{Family: trace.FamilyPipeline, Direction: c.dirName, Hook: trace.HookInit,
			Plugin: pl.name, Action: "continue", DurationNS: c.opts.Trace.Since(t0)}
		if err != nil {
			ev.Action, ev.Error = "error", redactText(err.Error())
			c.opts.Trace.Add(ev)
			return &PluginError{Plugin: pl.name, Hook: trace.HookInit, Rule: "P12", Err: err}
		}
		c.opts.Trace.Add(ev)
		c.startedN = i + 1
	}
	return nil
}

func callInit(ctx context.Context, pl *plug) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return pl.init.Init(ctx)
}

// Stop calls Shutdown exactly once on each started plugin that has it, in
// reverse declaration order (P13). "Started" means every plugin when Start
// was never called, otherwise the plugins before the one whose Init failed
// (that one and later ones were never initialised).
//
// Each call runs on its own goroutine so that Stop is bounded: while ctx's
// deadline has not passed, a call gets ctx; a call still running when ctx
// is done is waited for Options.Grace more, then abandoned and reported
// (ErrAbandoned). The remaining plugins still shut down after the deadline:
// each gets a fresh context (ctx's values, no cancellation) with a deadline
// of Options.Grace, so Stop overruns ctx's deadline by at most
// Grace × (plugins left + 1). An abandoned plugin must not expect the chain
// to wait for it.
//
// Errors and panics are reported but do not stop the others; the result
// joins one *PluginError per failed plugin. A second Stop does nothing.
func (c *Chain) Stop(ctx context.Context) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	n := len(c.plugins)
	if c.started {
		n = c.startedN
	}
	c.mu.Unlock()

	var errs []error
	for i := n - 1; i >= 0; i-- {
		pl := &c.plugins[i]
		if pl.shut == nil {
			continue
		}
		callCtx, cancel := ctx, context.CancelFunc(func() {})
		if ctx.Err() != nil {
			callCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), c.opts.Grace)
		}
		t0 := c.opts.Trace.Now()
		err := runBounded(callCtx, c.opts.Grace, func(ctx context.Context) error { return pl.shut.Shutdown(ctx) })
		cancel()
		ev := trace.Event{Family: trace.FamilyPipeline, Direction: c.dirName, Hook: trace.HookShutdown,
			Plugin: pl.name, Action: "continue", DurationNS: c.opts.Trace.Since(t0)}
		if err != nil {
			ev.Action, ev.Error = "error", redactText(err.Error())
			errs = append(errs, &PluginError{Plugin: pl.name, Hook: trace.HookShutdown, Rule: "P13", Err: err})
		}
		c.opts.Trace.Add(ev)
	}
	return errors.Join(errs...)
}

// runBounded runs f(ctx) on its own goroutine, recovering a panic, and waits
// until it returns or until ctx is done and grace has passed, then returns
// ErrAbandoned.
func runBounded(ctx context.Context, grace time.Duration, f func(context.Context) error) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- f(ctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return ErrAbandoned
	}
}

// Ready reports whether the chain is ready (P14): nil when every plugin that
// reports readiness says ready (plugins without the behaviour count as
// ready), otherwise an error naming each plugin that is not. It makes no
// allocation when all are ready and is safe for concurrent use.
func (c *Chain) Ready(ctx context.Context) error {
	var errs []error
	for i := range c.plugins {
		pl := &c.plugins[i]
		if pl.ready == nil {
			continue
		}
		if err := callReady(ctx, pl); err != nil {
			errs = append(errs, fmt.Errorf("plugin %q not ready: %w", pl.name, err))
		}
	}
	return errors.Join(errs...)
}

// callReady asks one plugin whether it is ready; a panic is a not-ready
// answer, as an Init panic is an Init error, not a crash of the host.
func callReady(ctx context.Context, pl *plug) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in Ready: %v", r)
		}
	}()
	return pl.ready.Ready(ctx)
}
