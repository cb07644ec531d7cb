package runtimekit

import (
	"context"
	"errors"
	"fmt"
	"time"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// CallTimeout bounds one probe call; the runner answers at once, so only a
// runner gone wrong reaches it.
const CallTimeout = 10 * time.Second

// Probes is the runner's probe server for one scenario: every hook call the
// runtime makes on a probe plugin, extension or hook is one [Probes.Call].
type Probes struct {
	c abkitv1.ProbeClient
}

// NewProbes wraps a client of the Probe service (the kit's server dials it
// over the go-plugin broker; a test may pass its own).
func NewProbes(c abkitv1.ProbeClient) *Probes { return &Probes{c: c} }

// Call makes one hook call on probe pc.Probe from inside the hook, with ctx
// the hook's context. It fills what the hook observes of ctx (CtxDone,
// DeadlineNs) and makes the call detached from ctx, so that a cancelled
// context is observed rather than failing the call; fill the rest of pc
// (exchange index, frame and last, outcome, state, bodies; point and
// payload; value) first.
//
// A call that fails (the runner is gone) panics: every runtime recovers
// and reports a hook panic, so the failure stays visible. So does a
// context whose Err and Done disagree (Err set but Done open, or Done
// closed and no Err), which a plugin reading either would trip on.
func (p *Probes) Call(ctx context.Context, pc *abkitv1.ProbeCall) *Reply {
	errBefore := ctx.Err()
	done := false
	select {
	case <-ctx.Done():
		done = true
	default:
	}
	// Err is read again after Done, since a deadline may pass in between.
	if (errBefore != nil && !done) || (done && ctx.Err() == nil) {
		panic(fmt.Sprintf("probe %d: %s: the hook's context is inconsistent: Err %v, Done closed %v", pc.Probe, pc.Hook, errBefore, done))
	}
	pc.CtxDone = done
	if d, ok := ctx.Deadline(); ok {
		pc.DeadlineNs = max(int64(time.Until(d)), 1)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CallTimeout)
	defer cancel()
	r, err := p.c.Call(cctx, pc)
	if err != nil {
		panic(fmt.Sprintf("probe %d: %s call failed: %v", pc.Probe, pc.Hook, err))
	}
	return &Reply{ProbeReply: r, probe: pc.Probe, hook: pc.Hook}
}

// Notify makes a call that has no hook context (an event delivery, D20):
// the error is the call's own, returned rather than panicking, since event
// failures are only warned about.
func (p *Probes) Notify(pc *abkitv1.ProbeCall) (*Reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	r, err := p.c.Call(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("probe %d: %s call failed: %w", pc.Probe, pc.Hook, err)
	}
	return &Reply{ProbeReply: r, probe: pc.Probe, hook: pc.Hook}, nil
}

// Reply is what the probe scripts the hook to do. Apply what is the
// runtime's own (state, body writes, the action or decision) from the
// generated fields, then call [Reply.Act] for the rest.
type Reply struct {
	*abkitv1.ProbeReply
	probe uint32
	hook  string
}

// Act does what the reply asks of the hook itself, in this order: cancel
// the client (when ctx comes from [NewClient]), block for SleepNs ignoring
// the context, panic. Call it after applying state and body writes, before
// returning the action.
func (r *Reply) Act(ctx context.Context) {
	if r.GetCancelClient() {
		if c, ok := ctx.Value(clientKey{}).(*Client); ok {
			c.Cancel()
		}
	}
	if n := r.GetSleepNs(); n > 0 {
		time.Sleep(time.Duration(n))
	}
	if r.GetPanic() {
		panic(fmt.Sprintf("probe %d panicked in %s (scripted)", r.probe, r.hook))
	}
}

// Err is the error the hook returns, nil for none.
func (r *Reply) Err() error {
	if e := r.GetError(); e != "" {
		return errors.New(e)
	}
	return nil
}

// Rejects reports a pipeline hook's rejection: ok with the status and
// reason the plugin gave (status is as given, outside 400–599 included).
func (r *Reply) Rejects() (status int, reason string, ok bool) {
	a := r.GetAction()
	if a.GetKind() != "reject" {
		return 0, "", false
	}
	return int(a.GetStatus()), a.GetReason(), true
}

// Lifecycle returns a lifecycle step (hook "init", "ready" or "shutdown")
// of probe as a function: one probe call, its reply acted out, its error
// returned.
func (p *Probes) Lifecycle(probe uint32, hook string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		r := p.Call(ctx, &abkitv1.ProbeCall{Probe: probe, Hook: hook})
		r.Act(ctx)
		return r.Err()
	}
}
