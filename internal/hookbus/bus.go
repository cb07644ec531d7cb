// Package hookbus is the reference hook bus (family H of the abkit
// contracts): it runs a proxy's submit hooks, part hooks and tool reactors
// in their declared order and applies the error policies of rules [H1]–H6.
//
// A [Bus] is built once from the registered hooks; the order of each chain
// is computed then and never changes (H1). A Bus is safe for concurrent use:
// runs share nothing but the frozen chains and the optional trace recorder.
//
// Policies:
//
//   - submit and part hooks: fail-open records the error and goes on with the
//     value as it was before the hook (H2); fail-closed and unspecified stop
//     the chain and return a [*HookError] (H3). A panic is a failure like any
//     other error.
//   - a submit rejection ([hooks.Reject]) stops the chain whatever the hook's
//     policy and is returned as a [*hooks.RejectError], never wrapped in a
//     HookError (H4).
//   - tool reactors: the bus-level tool policy (default fail-open) decides
//     what a reactor error, panic or invalid decision does (H5, H6); a reactor
//     that declares fail-closed itself always stops the chain, so a per-hook
//     declaration can tighten the bus policy but never loosen it.
//
// [H1]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package hookbus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/hooks"
)

// Trace actions the bus records besides the tool decisions.
const (
	ActionContinue = "continue"
	ActionReject   = "reject"
	ActionError    = "error"
)

// ErrInvalidDecision marks a tool reactor's decision the bus could not apply:
// an unknown decision, a rewrite of an unknown field or with a value of the
// wrong type, a replace without an event, or a resulting event that is not
// valid (H5).
var ErrInvalidDecision = errors.New("invalid tool decision")

// Config lists the hooks a bus runs. Within each slice, the position is the
// registration order, the last ordering key (H1).
type Config struct {
	Submit []hooks.SubmitHook
	// Parts holds request part and response part hooks; each hook's Spec
	// Kind says which chain it joins.
	Parts []hooks.PartHook
	Tools []hooks.ToolReactor
	// ToolPolicy is the bus-level policy for tool reactor failures (H6):
	// fail-open (the default when empty), fail-closed or swallow.
	ToolPolicy hooks.Policy
	// Recorder receives one trace event per hook call; nil records nothing.
	Recorder *trace.Recorder
	// KeepFailed keeps what a fail-open submit or part hook changed before
	// it failed, as LIP's bus does: the other alternative of choice
	// H2.rollback. By default the next hook sees the value from before it.
	KeepFailed bool
	// IgnoreInvalid ignores a tool reactor's decision that cannot be
	// applied (ErrInvalidDecision): the chain goes on with the current
	// event, whatever the policy, as LIP's ApplyToolReactors does; the
	// other alternative of choice H6.invalid. It is still traced.
	IgnoreInvalid bool
}

type entry[H any] struct {
	spec hooks.Spec
	hook H
}

// Bus runs the hook chains. Build it with [New].
type Bus struct {
	submit     []entry[hooks.SubmitHook]
	reqParts   []entry[hooks.PartHook]
	respParts  []entry[hooks.PartHook]
	tools      []entry[hooks.ToolReactor]
	toolPolicy hooks.Policy
	rec        *trace.Recorder
	keepFailed bool
	ignoreBad  bool
}

// New validates the configuration and builds a bus. Each hook's Spec is read
// exactly once, here. Every problem is reported, not just the first; each
// names the hook by kind, position and ID.
func New(cfg Config) (*Bus, error) {
	var errs []error
	b := &Bus{toolPolicy: cmp.Or(cfg.ToolPolicy, hooks.PolicyFailOpen), rec: cfg.Recorder, keepFailed: cfg.KeepFailed, ignoreBad: cfg.IgnoreInvalid}
	if err := cfg.ToolPolicy.CheckTool(); err != nil {
		errs = append(errs, fmt.Errorf("hook bus: %w", err))
	}
	b.submit = readEntries(cfg.Submit, "submit", &errs, hooks.KindSubmit)
	for _, e := range readEntries(cfg.Parts, "part", &errs, hooks.KindRequestPart, hooks.KindResponsePart) {
		if e.spec.Kind == hooks.KindRequestPart {
			b.reqParts = append(b.reqParts, e)
		} else {
			b.respParts = append(b.respParts, e)
		}
	}
	b.tools = readEntries(cfg.Tools, "tool", &errs, hooks.KindTool)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sortChain(b.submit)
	sortChain(b.reqParts)
	sortChain(b.respParts)
	sortChain(b.tools)
	return b, nil
}

type specer interface{ Spec() hooks.Spec }

// readEntries reads the spec of each hook of hs, the config list named
// list, into its chain entry. A hook whose spec cannot be read, or is of a
// kind not in kinds, is left out and its error joins errs.
func readEntries[H specer](hs []H, list string, errs *[]error, kinds ...hooks.Kind) []entry[H] {
	var out []entry[H]
	for i, h := range hs {
		spec, err := readSpec(h, list, i, kinds...)
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		out = append(out, entry[H]{spec, h})
	}
	return out
}

func readSpec[H specer](h H, list string, i int, kinds ...hooks.Kind) (hooks.Spec, error) {
	// A nil interface or a typed nil pointer would panic on Spec().
	if any(h) == nil {
		return hooks.Spec{}, fmt.Errorf("hook bus: %s hook #%d is nil", list, i)
	}
	spec, err := safeSpec(h)
	if err != nil {
		return spec, fmt.Errorf("hook bus: %s hook #%d: %w", list, i, err)
	}
	if err := spec.Validate(); err != nil {
		return spec, fmt.Errorf("hook bus: %s hook #%d (id %q): %w", list, i, spec.ID, err)
	}
	if !slices.Contains(kinds, spec.Kind) {
		return spec, fmt.Errorf("hook bus: %s hook #%d (id %q) declares kind %q; in this list the kind must be one of %q", list, i, spec.ID, spec.Kind, kinds)
	}
	return spec, nil
}

func safeSpec[H specer](h H) (spec hooks.Spec, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("Spec() panicked: %v", v)
		}
	}()
	return h.Spec(), nil
}

// sortChain orders by Order, then ID; the stable sort keeps registration
// order among equal keys (H1).
func sortChain[H any](c []entry[H]) {
	slices.SortStableFunc(c, func(a, b entry[H]) int {
		return cmp.Or(cmp.Compare(a.spec.Order, b.spec.Order), cmp.Compare(a.spec.ID, b.spec.ID))
	})
}

// WithRecorder returns a bus that shares b's frozen chains and records into
// rec, for tracing a single run (a dry run, a replay) of a shared bus.
func (b *Bus) WithRecorder(rec *trace.Recorder) *Bus {
	c := *b
	c.rec = rec
	return &c
}

// ToolPolicy returns the bus-level tool policy in effect (never empty).
func (b *Bus) ToolPolicy() hooks.Policy { return b.toolPolicy }

// Chain returns the specs of the hooks of kind in the order they run (H1).
func (b *Bus) Chain(kind hooks.Kind) []hooks.Spec {
	switch kind {
	case hooks.KindSubmit:
		return specs(b.submit)
	case hooks.KindRequestPart:
		return specs(b.reqParts)
	case hooks.KindResponsePart:
		return specs(b.respParts)
	case hooks.KindTool:
		return specs(b.tools)
	}
	return nil
}

func specs[H any](c []entry[H]) []hooks.Spec {
	out := make([]hooks.Spec, len(c))
	for i, e := range c {
		out[i] = e.spec
	}
	return out
}

// HookError is a hook failure: an error the hook returned, a panic, or (for
// tool reactors) an invalid decision. Policy is the policy that handled it.
type HookError struct {
	Kind   hooks.Kind
	Hook   string
	Policy hooks.Policy
	Err    error
}

func (e *HookError) Error() string {
	return fmt.Sprintf("%s hook %q failed (%s): %v", e.Kind, e.Hook, e.Policy, e.Err)
}

func (e *HookError) Unwrap() error { return e.Err }

// PanicError is a recovered hook panic (H3).
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// stopped is the error for a chain that stopped because ctx ended; it blames
// no hook and no policy applies.
func stopped(ctx context.Context, kind hooks.Kind, next string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hook bus: %s chain stopped before hook %q: %w", kind, next, err)
	}
	return nil
}

// record adds one trace event for a hook call that started at start.
func (b *Bus) record(kind hooks.Kind, id, action, reason string, err error, start time.Time) {
	if b.rec == nil {
		return
	}
	ev := trace.Event{
		Family: trace.FamilyHooks, Hook: string(kind), Plugin: id,
		Action: action, Reason: reason, DurationNS: b.rec.Since(start),
	}
	// D16 applies to every family's trace: reasons and errors may quote
	// credentials. Only reached when tracing is on.
	if reason != "" {
		ev.Reason = redact.String(reason)
	}
	if err != nil {
		ev.Error = redact.String(err.Error())
	}
	b.rec.Add(ev)
}
