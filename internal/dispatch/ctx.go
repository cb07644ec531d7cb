package dispatch

import (
	"context"
	"sync"
	"time"
)

// callCtx is the context of one extension call: the host's context plus the
// call's deadline (D3). It is built for the common in-process case, where
// the extension answers without ever looking at Done: until Done is called
// it holds no timer and no channel, and it is pooled, so a walk allocates
// nothing for its contexts. Calling Done arms a timer (and a watch on the
// parent); such a context is never reused.
//
// Extension.Call documents that ctx is valid only until Call returns; that
// is what makes pooling safe.
type callCtx struct {
	parent   context.Context
	deadline time.Time

	mu    sync.Mutex
	done  chan struct{}
	err   error
	timer *time.Timer
	stop  func() bool
}

var ctxPool = sync.Pool{New: func() any { return new(callCtx) }}

func newCallCtx(parent context.Context, deadline time.Time) *callCtx {
	c := ctxPool.Get().(*callCtx)
	if pd, ok := parent.Deadline(); ok && pd.Before(deadline) {
		deadline = pd
	}
	c.parent, c.deadline = parent, deadline
	return c
}

// release stops the context's timers and returns it to the pool when no
// caller ever asked for Done.
func (c *callCtx) release() {
	c.mu.Lock()
	reusable := c.done == nil
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.stop != nil {
		c.stop()
	}
	if c.err == nil {
		c.err = context.Canceled
		if c.done != nil {
			close(c.done)
		}
	}
	c.mu.Unlock()
	if reusable {
		c.parent, c.err = nil, nil
		ctxPool.Put(c)
	}
}

func (c *callCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *callCtx) Value(key any) any { return c.parent.Value(key) }

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.err != nil || c.expireLocked() {
		close(c.done)
		return c.done
	}
	c.timer = time.AfterFunc(time.Until(c.deadline), func() { c.fire(context.DeadlineExceeded) })
	if c.parent.Done() != nil {
		p := c.parent
		c.stop = context.AfterFunc(p, func() { c.fire(p.Err()) })
	}
	return c.done
}

func (c *callCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && c.expireLocked() && c.done != nil {
		close(c.done)
	}
	return c.err
}

// expireLocked sets err from the parent or the clock and reports whether it
// did. It does not touch done.
func (c *callCtx) expireLocked() bool {
	if c.err != nil {
		return false
	}
	if err := c.parent.Err(); err != nil {
		c.err = err
	} else if !time.Now().Before(c.deadline) {
		c.err = context.DeadlineExceeded
	}
	return c.err != nil
}

func (c *callCtx) fire(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}
