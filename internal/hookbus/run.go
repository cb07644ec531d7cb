package hookbus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/abkit/abkit/sdk/hooks"
)

// SubmitResult is the outcome of a submit chain.
type SubmitResult struct {
	// Submit is the request after the chain; nil when the run returned an
	// error. When no hook changed it, it may be the caller's own value.
	Submit *hooks.Submit
	// Errors are the failures of fail-open hooks, in chain order, each a
	// *HookError (H2). They are kept when the run fails later.
	Errors []error
}

// PartResult is the outcome of a part chain.
type PartResult struct {
	// Part is the part after the chain; the zero Part when the run returned
	// an error.
	Part hooks.Part
	// Errors are the failures of fail-open hooks, in chain order (H2).
	Errors []error
}

// ToolResult is the outcome of a tool reactor chain.
type ToolResult struct {
	// Event is the event after the chain. When the event was swallowed or
	// the run failed, it is the event as it stood before the reactor that
	// swallowed it or failed.
	Event hooks.ToolEvent
	// Swallowed reports that the event was dropped and must not be
	// delivered; SwallowedBy is the ID of the reactor that dropped it.
	Swallowed   bool
	SwallowedBy string
	// SwallowCause is nil when the reactor decided to swallow, and its
	// failure (a *HookError) when the bus's swallow policy dropped the event
	// (H6).
	SwallowCause error
	// Errors are the reactor failures the fail-open policy passed over, in
	// chain order (H6).
	Errors []error
}

// RunSubmit runs the submit chain over s (H1–H4). It never modifies *s:
// a hook changes the bus's copy.
//
// A rejection stops the chain and returns a *hooks.RejectError carrying the
// hook ID and reason (H4). A failure of a fail-closed or unspecified-policy
// hook stops the chain and returns a *HookError (H3); a failure of a
// fail-open hook is recorded in the result and the next hook sees the value
// as it was before the failing hook (H2). A context that ends stops the chain
// before the next hook with the context's error.
func (b *Bus) RunSubmit(ctx context.Context, s *hooks.Submit) (SubmitResult, error) {
	var res SubmitResult
	if s == nil {
		return res, errors.New("hook bus: RunSubmit called with a nil submit")
	}
	// owned: cur is the bus's copy, so a fail-closed hook may change it in
	// place; the caller's value is cloned before the first hook touches it.
	cur, owned := s, false
	for _, e := range b.submit {
		if err := stopped(ctx, hooks.KindSubmit, e.spec.ID); err != nil {
			return res, err
		}
		policy := cmp.Or(e.spec.Policy, hooks.PolicyFailClosed) // H3
		target := cur
		if policy == hooks.PolicyFailOpen || !owned {
			// H2: a fail-open hook works on a copy, so a change it made
			// before failing never reaches the next hook.
			target = cur.Clone()
		}
		start := b.rec.Now()
		err := callSubmit(ctx, e.hook, target)
		if err == nil {
			cur, owned = target, true
			b.record(hooks.KindSubmit, e.spec.ID, ActionContinue, "", nil, start)
			continue
		}
		if reason, ok := hooks.IsReject(err); ok { // H4, whatever the policy
			b.record(hooks.KindSubmit, e.spec.ID, ActionReject, reason, nil, start)
			return res, &hooks.RejectError{Hook: e.spec.ID, Reason: reason}
		}
		if herr := b.failed(hooks.KindSubmit, e.spec.ID, policy, err, start, &res.Errors); herr != nil {
			return res, herr
		}
		if b.keepFailed {
			cur, owned = target, true // choice H2.rollback: keep
		}
	}
	res.Submit = cur
	return res, nil
}

// failed records the failure of hook id, whose policy is policy, on a
// submit or part chain (H2, H3): a fail-open failure joins errs and nil is
// returned, so the chain goes on; any other is the returned *HookError that
// stops it.
func (b *Bus) failed(kind hooks.Kind, id string, policy hooks.Policy, err error, start time.Time, errs *[]error) error {
	herr := &HookError{Kind: kind, Hook: id, Policy: policy, Err: err}
	b.record(kind, id, ActionError, string(policy), err, start)
	if policy != hooks.PolicyFailOpen {
		return herr
	}
	*errs = append(*errs, herr)
	return nil
}

func callSubmit(ctx context.Context, h hooks.SubmitHook, s *hooks.Submit) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v)
		}
	}()
	return h.OnSubmit(ctx, s)
}

func panicError(v any) error {
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// RunRequestPart runs the request part chain over p. See [Bus.RunPart].
func (b *Bus) RunRequestPart(ctx context.Context, p hooks.Part) (PartResult, error) {
	return b.runPart(ctx, hooks.KindRequestPart, b.reqParts, p)
}

// RunResponsePart runs the response part chain over p. See [Bus.RunPart].
func (b *Bus) RunResponsePart(ctx context.Context, p hooks.Part) (PartResult, error) {
	return b.runPart(ctx, hooks.KindResponsePart, b.respParts, p)
}

// RunPart runs the part chain of kind (request_part or response_part) over p
// (H1–H3). The caller's bytes are never modified. Part hooks cannot reject:
// a [hooks.RejectError] from a part hook is a failure like any other and its
// policy applies.
func (b *Bus) RunPart(ctx context.Context, kind hooks.Kind, p hooks.Part) (PartResult, error) {
	switch kind {
	case hooks.KindRequestPart:
		return b.runPart(ctx, kind, b.reqParts, p)
	case hooks.KindResponsePart:
		return b.runPart(ctx, kind, b.respParts, p)
	}
	return PartResult{}, fmt.Errorf("hook bus: RunPart: kind %q is not a part kind; want %q or %q", kind, hooks.KindRequestPart, hooks.KindResponsePart)
}

func (b *Bus) runPart(ctx context.Context, kind hooks.Kind, chain []entry[hooks.PartHook], p hooks.Part) (PartResult, error) {
	var res PartResult
	cur, owned := p, false
	for _, e := range chain {
		if err := stopped(ctx, kind, e.spec.ID); err != nil {
			return res, err
		}
		policy := cmp.Or(e.spec.Policy, hooks.PolicyFailClosed) // H3
		in := cur
		if policy == hooks.PolicyFailOpen || !owned {
			in = cur.Clone() // H2: in-place changes before a failure must not leak
		}
		start := b.rec.Now()
		out, err := callPart(ctx, e.hook, in)
		if err == nil {
			cur, owned = out, true
			b.record(kind, e.spec.ID, ActionContinue, "", nil, start)
			continue
		}
		if herr := b.failed(kind, e.spec.ID, policy, err, start, &res.Errors); herr != nil {
			return res, herr
		}
		if b.keepFailed {
			cur, owned = out, true // choice H2.rollback: keep
		}
	}
	res.Part = cur
	return res, nil
}

func callPart(ctx context.Context, h hooks.PartHook, p hooks.Part) (out hooks.Part, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = p, panicError(v) // a panic returns nothing: the part as the hook left it
		}
	}()
	return h.OnPart(ctx, p)
}

// RunTool runs the tool reactor chain over ev (H1, H5, H6).
//
// ev must itself be valid (see [hooks.ToolEvent.Validate]); an invalid input
// is the caller's error and no reactor runs. Each reactor gets its own copy
// of the current event. Its decision is applied and the resulting event
// validated before the next reactor sees it (H5). A swallow decision drops
// the event and no later reactor runs.
//
// A reactor failure — an error, a panic, or a decision that cannot be applied
// or yields an invalid event ([ErrInvalidDecision]) — is handled by the
// reactor's effective policy: fail-closed when the reactor declares
// fail-closed, the bus's tool policy otherwise (H6). Fail-open records the
// failure and goes on with the current event; fail-closed stops and returns a
// *HookError; swallow drops the event and reports the failure as
// SwallowCause.
func (b *Bus) RunTool(ctx context.Context, ev hooks.ToolEvent) (ToolResult, error) {
	res := ToolResult{Event: ev}
	if err := ev.Validate(); err != nil {
		return res, fmt.Errorf("hook bus: RunTool: the event given to the bus is invalid (no reactor ran): %w", err)
	}
	for _, e := range b.tools {
		if err := stopped(ctx, hooks.KindTool, e.spec.ID); err != nil {
			return res, err
		}
		start := b.rec.Now()
		// The reactor gets a copy: changing its bytes in place is not a way
		// around validation (H5).
		d, err := callTool(ctx, e.hook, res.Event.Clone())
		action := ActionError
		if err == nil {
			var next hooks.ToolEvent
			var swallowed bool
			next, swallowed, err = d.Apply(res.Event)
			if err != nil {
				err = fmt.Errorf("%w: %w", ErrInvalidDecision, err)
				if b.ignoreBad { // choice H6.invalid: ignored
					b.record(hooks.KindTool, e.spec.ID, ActionError, "ignored", err, start)
					continue
				}
			} else {
				action = string(cmp.Or(d.Kind, hooks.DecisionPass))
				b.record(hooks.KindTool, e.spec.ID, action, d.Reason, nil, start)
				if swallowed {
					res.Swallowed, res.SwallowedBy = true, e.spec.ID
					return res, nil
				}
				res.Event = next
				continue
			}
		}
		policy := b.toolPolicy
		if e.spec.Policy == hooks.PolicyFailClosed {
			policy = hooks.PolicyFailClosed // a reactor may tighten, never loosen, the bus policy
		}
		herr := &HookError{Kind: hooks.KindTool, Hook: e.spec.ID, Policy: policy, Err: err}
		b.record(hooks.KindTool, e.spec.ID, action, string(policy), err, start)
		switch policy {
		case hooks.PolicyFailClosed:
			return res, herr
		case hooks.PolicySwallow:
			res.Swallowed, res.SwallowedBy, res.SwallowCause = true, e.spec.ID, herr
			return res, nil
		default: // fail-open
			res.Errors = append(res.Errors, herr)
		}
	}
	return res, nil
}

func callTool(ctx context.Context, h hooks.ToolReactor, ev hooks.ToolEvent) (d hooks.ToolDecision, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v)
		}
	}()
	return h.OnTool(ctx, ev)
}
