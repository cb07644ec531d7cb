package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/sdk/intercept"
)

// stuckNotify is an in-process extension whose Notify never returns until
// the test releases it.
type stuckNotify struct {
	entered chan struct{} // closed on the first Notify
	release chan struct{}
	once    sync.Once
}

// free lets Notify return.
func (s *stuckNotify) free() { s.once.Do(func() { close(s.release) }) }

func newStuck(t *testing.T) *stuckNotify {
	s := &stuckNotify{entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(s.free)
	return s
}

func (s *stuckNotify) Call(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
	return intercept.Continue(), nil
}

func (s *stuckNotify) Notify(intercept.Point, json.RawMessage) error {
	select {
	case <-s.entered:
	default:
		close(s.entered)
	}
	<-s.release
	return nil
}

// stuckDispatcher queues two tool.after events for "a-stuck" then
// "b-later" and waits until the worker is inside a-stuck's Notify.
func stuckDispatcher(t *testing.T, opts Options) (*Dispatcher, *stuckNotify, *fake) {
	t.Helper()
	stuck, later := newStuck(t), &fake{}
	opts.OnWarning = func(Warning) {}
	d, err := New([]Contribution{
		contrib("a-stuck", stuck, intercept.ToolAfter),
		contrib("b-later", later, intercept.ToolAfter),
	}, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	payload := samples()[intercept.ToolAfter][0]
	for range 2 {
		if _, err := d.Dispatch(context.Background(), Request{Point: intercept.ToolAfter, Payload: payload}); err != nil {
			t.Fatalf("Dispatch: %v", err)
		}
	}
	select {
	case <-stuck.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the worker never called Notify")
	}
	return d, stuck, later
}

// TestCloseBoundedByStuckNotifyD20: Close returns within
// Options.CloseTimeout when a Notify never returns, with an error naming
// the extension; the abandoned worker delivers nothing more, even once the
// stuck Notify returns.
func TestCloseBoundedByStuckNotifyD20(t *testing.T) {
	const bound = 200 * time.Millisecond
	d, stuck, later := stuckDispatcher(t, Options{CloseTimeout: bound})

	start := time.Now()
	err := d.Close()
	waited := time.Since(start)
	// ErrCloseTimeout below proves the bound ended Close; the minute is
	// only a hang guard.
	if waited < bound || waited > time.Minute {
		t.Errorf("Close took %v, want about %v", waited, bound)
	}
	var ce *CloseError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCloseTimeout) {
		t.Fatalf("Close: %v, want a *CloseError unwrapping to ErrCloseTimeout", err)
	}
	if ce.Extension != "a-stuck" || ce.Point != intercept.ToolAfter || ce.Undelivered != 1 {
		t.Errorf("CloseError %+v, want a-stuck at tool.after with 1 undelivered event", *ce)
	}
	for _, want := range []string{`"a-stuck"`, "Notify", "D20"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Close error %q does not name %s", err, want)
		}
	}

	// Idempotent: a second Close reports the same at once. Given a context
	// already ended, one that waited again would return that context's
	// error instead.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err2 := d.CloseContext(ended); err2 != err {
		t.Errorf("second Close: %v, want the same error at once", err2)
	}
	if _, err := d.Dispatch(context.Background(), Request{Point: intercept.ToolAfter, Payload: samples()[intercept.ToolAfter][0]}); !errors.Is(err, ErrClosed) {
		t.Errorf("Dispatch after Close: %v, want ErrClosed", err)
	}

	// Let the stuck Notify return: the worker stops without delivering the
	// rest of the first event or the second one.
	stuck.free()
	select {
	case <-d.stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned worker did not stop after the stuck Notify returned")
	}
	if ev := later.seenEvents(); len(ev) != 0 {
		t.Errorf("b-later got %d events after Close abandoned the worker, want none: %v", len(ev), ev)
	}
}

// TestCloseContextEndsFirstD20: CloseContext gives up when its context
// ends before the bound, and the error unwraps to the context's error too.
func TestCloseContextEndsFirstD20(t *testing.T) {
	d, _, _ := stuckDispatcher(t, Options{CloseTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := d.CloseContext(ctx)
	if time.Since(start) > 30*time.Second { // hang guard; the CloseTimeout is a minute
		t.Errorf("CloseContext took %v, want about 100ms", time.Since(start))
	}
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Extension != "a-stuck" || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrCloseTimeout) {
		t.Fatalf("CloseContext: %v, want a CloseError naming a-stuck that unwraps to ErrCloseTimeout and DeadlineExceeded", err)
	}
}

// TestCloseDeliversQueuedEventsD20: a Notify that returns is waited for,
// and Close reports no error.
func TestCloseDeliversQueuedEventsD20(t *testing.T) {
	stuck, later := newStuck(t), &fake{}
	d, err := New([]Contribution{contrib("a-stuck", stuck, intercept.ToolAfter), contrib("b-later", later, intercept.ToolAfter)},
		Options{OnWarning: func(Warning) {}, CloseTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Dispatch(context.Background(), Request{Point: intercept.ToolAfter, Payload: samples()[intercept.ToolAfter][0]}); err != nil {
		t.Fatal(err)
	}
	<-stuck.entered
	time.AfterFunc(50*time.Millisecond, func() { stuck.free() })
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v, want nil once Notify returned", err)
	}
	if ev := later.seenEvents(); len(ev) != 1 {
		t.Errorf("b-later got %v, want the one queued event", ev)
	}
}

func TestNegativeCloseTimeoutRejected(t *testing.T) {
	_, err := New(nil, Options{CloseTimeout: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "CloseTimeout") {
		t.Fatalf("New: %v, want an error naming CloseTimeout", err)
	}
}
