// Package dispatch is abkit's reference intercept dispatcher (family D of
// the abkit contracts, rules [D1]–D20): it walks the frozen chain of agent
// extensions at an interception point, applies their decisions, lets slot
// owners rule last, enforces the failure policy and broadcasts the final
// payload as an event.
//
// A [Dispatcher] is built once from [Contribution]s with [New] and then
// serves concurrent [Dispatcher.Dispatch] calls. Close it to stop its event
// worker; Close waits at most [Options.CloseTimeout] for events already
// queued.
//
// [D1]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package dispatch

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/intercept"
)

// Contribution is one extension offered to the dispatcher.
type Contribution struct {
	Manifest  intercept.Manifest
	Extension intercept.Extension
}

// Options tune a dispatcher. The zero value is ready to use.
type Options struct {
	// OnWarning receives each distinct warning once per dispatcher (D15),
	// already redacted (D16). It may be called from any goroutine, including
	// the event worker. Nil logs through slog.Default.
	OnWarning func(Warning)
	// QueueSize bounds the event queue (D20). Zero means 1024.
	QueueSize int
	// CloseTimeout bounds how long Close waits for the event worker to
	// deliver the events already queued (D20), so that an in-process
	// extension whose Notify never returns cannot hang Close. Zero means
	// DefaultCloseTimeout.
	CloseTimeout time.Duration
	// HostTypeOnly checks only the type (the shape) of the host's payload,
	// not its validity rules, which then apply to replacements alone: the
	// other alternative of choice D2.host-check, as Reasonix's dispatcher
	// does (checkPayloadType). By default an invalid host payload is a
	// host error (ErrInvalidPayload) and no extension is asked.
	HostTypeOnly bool
}

// DefaultCloseTimeout is the Close bound when Options.CloseTimeout is zero.
const DefaultCloseTimeout = 5 * time.Second

// Warning is a non-fatal problem with an optional extension or with event
// delivery (D13–D15, D20).
type Warning struct {
	Extension string
	Point     intercept.Point
	Kind      Kind
	// Message is redacted (D16).
	Message string
}

// Kind classifies failures, violations and warnings.
type Kind string

const (
	KindError     Kind = "error"      // the call returned an error
	KindPanic     Kind = "panic"      // an in-process extension panicked
	KindTimeout   Kind = "timeout"    // the answer came after the budget (D3)
	KindNoProcess Kind = "no_process" // no live extension process (D13)
	KindViolation Kind = "violation"  // the answer broke D8/D9/D19 (D14)
	KindEventDrop Kind = "event_drop" // the event queue was full (D20)
	KindEventFail Kind = "event_failure"
)

// Host errors: the dispatch itself was wrong, never an extension's fault.
var (
	// ErrWrongPayload: the payload's type does not belong to the point (D2).
	ErrWrongPayload = intercept.ErrWrongPayload
	// ErrInvalidPayload: the host's payload breaks the point's rules (D2).
	ErrInvalidPayload = errors.New("invalid host payload")
	// ErrUnknownPoint: the point is not one of D1.
	ErrUnknownPoint = errors.New("unknown interception point")
	// ErrClosed: the dispatcher was closed.
	ErrClosed = errors.New("dispatcher closed")
	// ErrCloseTimeout: Close gave up waiting for the event worker and
	// abandoned it (D20); see [CloseError].
	ErrCloseTimeout = errors.New("event worker did not stop in time")
)

// CloseError reports that Close abandoned the event worker because it had
// not delivered the queued events within the bound (D20). It unwraps to
// ErrCloseTimeout, and to the context's error when the context ended first.
type CloseError struct {
	// Extension is the plugin ID whose Notify was running when Close gave
	// up, empty when the worker was between calls.
	Extension string
	// Point is the event that Notify was taking.
	Point intercept.Point
	// Waited is how long Close waited.
	Waited time.Duration
	// Undelivered is how many queued events were dropped, not counting the
	// one in progress.
	Undelivered int
	ctxErr      error
}

func (e *CloseError) Error() string {
	if e.Extension == "" {
		return fmt.Sprintf("dispatch: close: the event worker had not delivered the queued events after %v; abandoned it, %d events not delivered (D20)",
			e.Waited.Round(time.Millisecond), e.Undelivered)
	}
	return fmt.Sprintf("dispatch: close: extension %q has not returned from Notify of the %s event after %v; abandoned the event worker, %d more queued events not delivered (D20); fix the extension's Notify so it returns",
		e.Extension, e.Point, e.Waited.Round(time.Millisecond), e.Undelivered)
}

func (e *CloseError) Unwrap() []error {
	if e.ctxErr != nil {
		return []error{ErrCloseTimeout, e.ctxErr}
	}
	return []error{ErrCloseTimeout}
}

// Sentinels an [*ExtensionError] unwraps to, by kind.
var (
	ErrExtension = errors.New("extension failed")
	ErrTimeout   = errors.New("extension timed out")
	ErrViolation = errors.New("extension broke the contract")
	// ErrNoProcess is intercept.ErrNoProcess, which adapters wrap.
	ErrNoProcess = intercept.ErrNoProcess
)

// ExtensionError is a required-class failure or violation that failed the
// operation (D13, D14, D19). Its text is redacted (D16); it unwraps to the
// sentinel of its kind (and context.DeadlineExceeded for timeouts), never to
// the extension's own error, whose text could carry credentials.
type ExtensionError struct {
	Extension string
	Point     intercept.Point
	// Phase is "walk" or "strategy".
	Phase  string
	Kind   Kind
	Detail string
}

func (e *ExtensionError) Error() string {
	return fmt.Sprintf("dispatch %s: required extension %q %s in the %s phase: %s",
		e.Point, e.Extension, kindVerb(e.Kind), e.Phase, e.Detail)
}

func (e *ExtensionError) Unwrap() []error {
	switch e.Kind {
	case KindTimeout:
		return []error{ErrTimeout, context.DeadlineExceeded}
	case KindNoProcess:
		return []error{ErrNoProcess}
	case KindViolation:
		return []error{ErrViolation}
	}
	return []error{ErrExtension}
}

func kindVerb(k Kind) string {
	switch k {
	case KindTimeout:
		return "timed out"
	case KindNoProcess:
		return "has no live process"
	case KindViolation:
		return "broke the contract"
	case KindPanic:
		return "panicked"
	}
	return "failed"
}

// Request is one dispatch.
type Request struct {
	Point intercept.Point
	// Payload is the point's payload: a pointer to (or value of) its
	// intercept payload type, or its JSON encoding as json.RawMessage.
	Payload any
	// Provider names the provider target ("<name>/<model>" or
	// "plugin/<id>/<name>/<model>") at provider.request and
	// provider.response, selecting a provider:… slot (D17, D19).
	Provider string
	// Trace, when non-nil, receives one event per call (phase walk,
	// strategy or event).
	Trace *trace.Recorder
}

// Result is the outcome of a dispatch that did not fail.
type Result struct {
	// Payload is the final payload. When Changed is false it is the host's
	// own bytes (a json.RawMessage request payload, byte for byte) or the
	// encoding of its typed payload (D11).
	Payload json.RawMessage
	// Value is the final typed payload: the host's own Request.Payload,
	// untouched, when Changed is false, else a fresh pointer of the point's
	// payload type (D11).
	Value any
	// Changed reports whether replacements left a payload different from
	// the host's.
	Changed bool
	// Replaced lists the extensions whose replace was applied, in order,
	// walk then strategy (D8, D19).
	Replaced []string
	// Blocked reports a block (D7, D19); BlockedBy and BlockPhase say who
	// and where, Reason why (redacted, D16).
	Blocked    bool
	BlockedBy  string
	BlockPhase string
	Reason     string
	// Permission is the ruling at permission.decision (D9, D10): the host's
	// verdict unless an extension allowed or denied; DecidedBy names that
	// extension. Empty at other points.
	Permission intercept.Decision
	DecidedBy  string
	// Notes are audit notes, e.g. an allow overriding a host deny (D10).
	Notes []string
	// Warnings are the warnings this dispatch emitted for the first time
	// (D15), redacted.
	Warnings []string
}

type member struct {
	id       string
	index    int // registration order
	ext      intercept.Extension
	required bool
	priority int
	timeout  time.Duration // manifest override, 0 = point default
}

type owner struct {
	slot intercept.Slot
	m    *member
}

type pointTable struct {
	point     intercept.Point
	chain     []*member
	strategy  []owner   // slot owners ruling here, generic slots first
	observers []*member // chain ∪ owners of unconditional slots, deduplicated
	condObs   []owner   // tool:/provider: owners, matched per dispatch
}

// Dispatcher is a built, frozen dispatcher (D4). It is safe for concurrent
// use.
type Dispatcher struct {
	points    map[intercept.Point]*pointTable
	notes     []string
	onWarning func(Warning)
	warned    sync.Map // warnKey → struct{}

	events       chan eventJob
	done         chan struct{}
	closeOnce    sync.Once
	closeTimeout time.Duration
	hostTypeOnly bool
	// stopped is closed when the worker returns.
	stopped chan struct{}
	// notifyMu guards notifying, the Notify the worker is in (zero when
	// none), for Close's report. A mutex over a value, not an atomic
	// pointer to a fresh struct, so a delivery allocates nothing.
	notifyMu  sync.Mutex
	notifying notifying
	// abandoned tells the worker, once a Close gave up on it, to deliver
	// nothing more.
	abandoned atomic.Bool
	closeMu   sync.Mutex
	closeErr  error // the first abandonment, returned by later Close calls
	// sendMu orders queueing against Close: broadcast queues under the read
	// lock, Close sets closed under the write lock before the worker's final
	// drain, so no event is queued after the drain and lost unnoticed.
	sendMu sync.RWMutex
	closed bool
}

type warnKey struct {
	index int // member registration index, -1 for the dispatcher
	kind  Kind
}

type notifying struct {
	ext   string
	point intercept.Point
}

type eventJob struct {
	pt       *pointTable
	payload  json.RawMessage
	tool     string
	provider string
}

// New builds a dispatcher from contributions (D4, D5, D12, D17, D18). The
// chains are sorted and frozen here; later changes to contribs do not affect
// the dispatcher. It fails on an out-of-range priority, an unknown point, an
// invalid slot, a second claim on a slot (naming both claimants), a negative
// timeout or a missing extension. Contributions without a plugin ID are
// skipped with a note (see [Dispatcher.Notes]).
func New(contribs []Contribution, opts Options) (*Dispatcher, error) {
	d := &Dispatcher{points: make(map[intercept.Point]*pointTable), onWarning: opts.OnWarning,
		closeTimeout: cmp.Or(opts.CloseTimeout, DefaultCloseTimeout), hostTypeOnly: opts.HostTypeOnly}
	if opts.CloseTimeout < 0 {
		return nil, fmt.Errorf("dispatch: Options.CloseTimeout is %v; use a positive bound, or 0 for %v", opts.CloseTimeout, DefaultCloseTimeout)
	}
	for _, p := range intercept.Points() {
		d.points[p] = &pointTable{point: p}
	}
	claims := map[string]*member{}
	var members []*member
	var slotsOf [][]intercept.Slot
	for i, c := range contribs {
		mf := c.Manifest
		if mf.PluginID == "" {
			d.notes = append(d.notes, fmt.Sprintf("contribution #%d has no plugin ID and was skipped (D5)", i))
			continue
		}
		name := fmt.Sprintf("extension %q (contribution #%d)", mf.PluginID, i)
		if c.Extension == nil {
			return nil, fmt.Errorf("dispatch: %s has no Extension; set Contribution.Extension", name)
		}
		if mf.Priority < intercept.MinPriority || mf.Priority > intercept.MaxPriority {
			return nil, fmt.Errorf("dispatch: %s: priority %d out of range %d…%d (D4)", name, mf.Priority, intercept.MinPriority, intercept.MaxPriority)
		}
		if mf.Timeout < 0 {
			return nil, fmt.Errorf("dispatch: %s: negative timeout %v; use 0 for the default (D3)", name, mf.Timeout)
		}
		m := &member{id: mf.PluginID, index: i, ext: c.Extension, required: mf.Required,
			priority: mf.Priority, timeout: mf.Timeout}
		if m.timeout > intercept.MaxTimeout {
			d.notes = append(d.notes, fmt.Sprintf("%s: timeout %v capped at %v (D3)", name, mf.Timeout, intercept.MaxTimeout))
			m.timeout = intercept.MaxTimeout
		}
		var slots []intercept.Slot
		for _, s := range mf.Slots {
			sl, err := intercept.ParseSlot(s)
			if err != nil {
				return nil, fmt.Errorf("dispatch: %s: %w (D17)", name, err)
			}
			key := sl.String()
			if prev, ok := claims[key]; ok {
				return nil, fmt.Errorf("dispatch: slot %q claimed twice: by extension %q (contribution #%d) and by %s; a slot has one owner (D18)",
					key, prev.id, prev.index, name)
			}
			claims[key] = m
			slots = append(slots, sl)
		}
		if len(slots) > 0 {
			m.required = true // D12
		}
		seen := map[intercept.Point]bool{}
		for _, p := range mf.Points {
			pt, ok := d.points[p]
			if !ok {
				return nil, fmt.Errorf("dispatch: %s: unknown point %q; valid points: %v (D1)", name, p, intercept.Points())
			}
			if !seen[p] {
				seen[p] = true
				pt.chain = append(pt.chain, m)
			}
		}
		members = append(members, m)
		slotsOf = append(slotsOf, slots)
	}
	for _, pt := range d.points {
		slices.SortStableFunc(pt.chain, func(a, b *member) int { // D4
			return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.id, b.id), cmp.Compare(a.index, b.index))
		})
		pt.observers = append(pt.observers, pt.chain...)
	}
	// Slot owners, generic slots before tool:/provider: ones so that the
	// most specific owner rules last (D19).
	for pass := 0; pass < 2; pass++ {
		for i, m := range members {
			for _, sl := range slotsOf[i] {
				conditional := sl.Kind == intercept.SlotTool || sl.Kind == intercept.SlotProvider
				if conditional != (pass == 1) {
					continue
				}
				for _, p := range sl.Points() {
					pt := d.points[p]
					if !intercept.IsEventOnly(p) {
						pt.strategy = append(pt.strategy, owner{sl, m})
					}
					if conditional {
						pt.condObs = append(pt.condObs, owner{sl, m})
					} else if !slices.Contains(pt.observers, m) {
						pt.observers = append(pt.observers, m)
					}
				}
			}
		}
	}
	size := opts.QueueSize
	if size <= 0 {
		size = 1024
	}
	d.events = make(chan eventJob, size)
	d.done = make(chan struct{})
	d.stopped = make(chan struct{})
	go d.worker()
	return d, nil
}

// Notes returns the build notes (skipped contributions, capped timeouts).
func (d *Dispatcher) Notes() []string { return slices.Clone(d.notes) }

// Chain returns the plugin IDs of the frozen chain at point, in walk order.
func (d *Dispatcher) Chain(point intercept.Point) []string {
	pt := d.points[point]
	if pt == nil {
		return nil
	}
	ids := make([]string, len(pt.chain))
	for i, m := range pt.chain {
		ids[i] = m.id
	}
	return ids
}

// Close stops the event worker after it has delivered the events already
// queued, waiting at most [Options.CloseTimeout]; it is CloseContext with
// context.Background.
func (d *Dispatcher) Close() error {
	return d.CloseContext(context.Background())
}

// CloseContext stops the event worker after it has delivered the events
// already queued (D20). Dispatches after it fail with ErrClosed.
//
// It waits until the worker stops, ctx ends or [Options.CloseTimeout]
// passes, whichever is first. If the worker has not stopped by then (an
// in-process extension's Notify that never returns blocks it), it abandons
// the worker: the worker delivers nothing more, even if the stuck Notify
// returns later, and CloseContext returns a [*CloseError] naming the
// extension whose Notify is stuck. The abandoned goroutine lives until that
// Notify returns. CloseContext is idempotent: once the worker has been
// abandoned, later calls return the same error at once.
func (d *Dispatcher) CloseContext(ctx context.Context) error {
	d.closeOnce.Do(func() {
		d.sendMu.Lock()
		d.closed = true
		d.sendMu.Unlock()
		close(d.done)
	})
	select {
	case <-d.stopped:
		return nil
	default:
	}
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	if d.closeErr != nil {
		return d.closeErr
	}
	start := time.Now()
	timer := time.NewTimer(d.closeTimeout)
	defer timer.Stop()
	var ctxErr error
	select {
	case <-d.stopped:
		return nil
	case <-timer.C:
	case <-ctx.Done():
		ctxErr = ctx.Err()
	}
	d.abandoned.Store(true)
	e := &CloseError{Waited: time.Since(start), Undelivered: len(d.events), ctxErr: ctxErr}
	d.notifyMu.Lock()
	e.Extension, e.Point = d.notifying.ext, d.notifying.point
	d.notifyMu.Unlock()
	d.closeErr = e
	return e
}

// Dispatch runs one operation at req.Point: the chain walk (D6–D11), the
// strategy phase (D19) and the event broadcast (D20). Event-only points get
// only the broadcast.
//
// A returned error is either a host error (ErrWrongPayload,
// ErrInvalidPayload, ErrUnknownPoint, ErrClosed, or ctx's error when the
// host's context ended) or an [*ExtensionError] that failed the operation.
// A block is not an error: see Result.Blocked.
func (d *Dispatcher) Dispatch(ctx context.Context, req Request) (Result, error) {
	select {
	case <-d.done:
		return Result{}, ErrClosed
	default:
	}
	point := req.Point
	pt := d.points[point]
	if pt == nil {
		return Result{}, fmt.Errorf("dispatch: %w %q", ErrUnknownPoint, point)
	}
	host, orig, err := hostPayload(point, req.Payload, d.hostTypeOnly)
	if err != nil {
		return Result{}, err
	}
	res := Result{Payload: orig, Value: req.Payload}
	w := walk{d: d, pt: pt, rec: req.Trace, tool: toolName(host), provider: req.Provider}
	_, hostRaw := req.Payload.(json.RawMessage)
	if intercept.IsEventOnly(point) {
		d.broadcast(&w, orig, hostRaw)
		res.Warnings = w.warnings
		return res, nil
	}
	var verdict intercept.Decision
	if pp, ok := host.(*intercept.PermissionPayload); ok {
		verdict = pp.HostDecision // D10: fixed before the walk
		res.Permission = verdict
	}
	cur := orig
	var curVal intercept.Payload
	blocked, err := w.chain(ctx, point, verdict, &res, &cur, &curVal)
	if err != nil {
		return Result{}, err
	}
	if !blocked { // D19: a block in the walk skips the strategy phase
		if err := w.strategy(ctx, point, &res, &cur, &curVal); err != nil {
			return Result{}, err
		}
	}
	if curVal != nil {
		// D11: only a payload that really differs counts as changed; a
		// replace that restored the host's payload keeps the host's bytes.
		if same, err := sameAsHost(point, host, orig, cur); err == nil && same {
			cur, curVal = orig, nil
		}
	}
	if curVal != nil {
		res.Payload, res.Value, res.Changed = cur, curVal, true
	}
	d.broadcast(&w, res.Payload, hostRaw && !res.Changed)
	res.Warnings = w.warnings
	return res, nil
}

// chain is the walk of the point's chain (D6-D11): each member in turn
// continues, blocks, replaces the payload (*cur and *curVal) or, at
// permission.decision, rules. It reports whether a member blocked.
func (w *walk) chain(ctx context.Context, point intercept.Point, verdict intercept.Decision, res *Result, cur *json.RawMessage, curVal *intercept.Payload) (blocked bool, err error) {
	for _, m := range w.pt.chain {
		ans, ok, err := w.call(ctx, m, "walk", *cur)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		switch ans.Decision {
		case intercept.DecisionContinue: // D6
		case intercept.DecisionBlock: // D7
			res.Blocked, res.BlockedBy, res.BlockPhase = true, m.id, "walk"
			res.Reason = redact.String(ans.Reason)
			return true, nil
		case intercept.DecisionReplace: // D8
			v, canon, err := decodeReplacement(point, ans.Replacement)
			if err != nil {
				if ferr := w.violation(m, "walk", "replace: "+err.Error()); ferr != nil {
					return false, ferr
				}
				continue
			}
			*cur, *curVal = canon, v
			res.Replaced = append(res.Replaced, m.id)
		case intercept.DecisionAllow, intercept.DecisionDeny: // D9, D10
			if point != intercept.PermissionDecision {
				if ferr := w.violation(m, "walk", fmt.Sprintf("decision %q is legal only at %s (D9)", ans.Decision, intercept.PermissionDecision)); ferr != nil {
					return false, ferr
				}
				continue
			}
			if ans.Decision == intercept.DecisionAllow && verdict == intercept.DecisionDeny {
				res.Notes = append(res.Notes, redact.String(fmt.Sprintf(
					"extension %q allowed %s over the host's deny: %s", m.id, point, ans.Reason)))
			}
			res.Permission, res.DecidedBy = ans.Decision, m.id
			res.Reason = redact.String(ans.Reason)
			return false, nil
		default:
			if ferr := w.violation(m, "walk", fmt.Sprintf("unknown decision %q (D9)", ans.Decision)); ferr != nil {
				return false, ferr
			}
		}
	}
	return false, nil
}

// strategy is the strategy phase (D19): the owners of the slots that
// apply continue, replace the payload or block; anything else fails the
// operation.
func (w *walk) strategy(ctx context.Context, point intercept.Point, res *Result, cur *json.RawMessage, curVal *intercept.Payload) error {
	for _, o := range w.pt.strategy {
		if !o.slot.Applies(point, w.tool, w.provider) {
			continue
		}
		ans, ok, err := w.call(ctx, o.m, "strategy", *cur)
		if err != nil {
			return err
		}
		if !ok { // owners are required-class, so failures never get here
			continue
		}
		switch ans.Decision {
		case intercept.DecisionContinue:
		case intercept.DecisionReplace:
			v, canon, err := decodeReplacement(point, ans.Replacement)
			if err != nil {
				return w.violation(o.m, "strategy", "replace: "+err.Error())
			}
			*cur, *curVal = canon, v
			res.Replaced = append(res.Replaced, o.m.id)
		case intercept.DecisionBlock:
			res.Blocked, res.BlockedBy, res.BlockPhase = true, o.m.id, "strategy"
			res.Reason = redact.String(ans.Reason)
			return nil
		default:
			return w.violation(o.m, "strategy", fmt.Sprintf(
				"decision %q is not legal for slot %s; owners answer continue, replace or block (D19)", ans.Decision, o.slot))
		}
	}
	return nil
}

// walk is the state of one dispatch.
type walk struct {
	d        *Dispatcher
	pt       *pointTable
	rec      *trace.Recorder
	tool     string
	provider string
	// warnings are those this dispatch emitted first (Result.Warnings).
	warnings []string
	// now is the end time of the previous call.
	now time.Time
}

// call makes one extension call with its budget and classifies the outcome.
// ok is false when an optional extension failed and is skipped; err is a
// fatal error (host cancellation or required-class failure).
func (w *walk) call(ctx context.Context, m *member, phase string, payload json.RawMessage) (ans intercept.Answer, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return ans, false, fmt.Errorf("dispatch %s: host context ended before extension %q: %w", w.pt.point, m.id, err)
	}
	budget := m.timeout
	if budget == 0 {
		budget = intercept.Budget(w.pt.point)
	}
	// The previous call's end time starts this call's budget: one clock
	// read per call instead of two, and the budget can only start early.
	start := w.now
	if start.IsZero() {
		start = time.Now()
	}
	deadline := start.Add(budget)
	cctx := newCallCtx(ctx, deadline)
	ans, callErr := safeCall(cctx, m.ext, w.pt.point, payload)
	end := time.Now()
	w.now = end
	cctx.release()
	if perr := ctx.Err(); perr != nil {
		return ans, false, fmt.Errorf("dispatch %s: host context ended during extension %q: %w", w.pt.point, m.id, perr)
	}
	var kind Kind
	var detail string
	switch {
	case callErr != nil && errors.Is(callErr, ErrNoProcess):
		kind, detail = KindNoProcess, callErr.Error()
	case !end.Before(deadline) || (callErr != nil && errors.Is(callErr, context.DeadlineExceeded)):
		kind, detail = KindTimeout, fmt.Sprintf("no answer within %v (D3)", budget)
	case callErr != nil && errors.Is(callErr, errPanic):
		kind, detail = KindPanic, callErr.Error()
	case callErr != nil:
		kind, detail = KindError, callErr.Error()
	}
	if w.rec.Enabled() {
		e := trace.Event{Family: trace.FamilyDispatch, Hook: string(w.pt.point), Plugin: m.id,
			Phase: phase, DurationNS: end.Sub(start).Nanoseconds()}
		if kind != "" {
			e.Action, e.Error = "error", redact.String(string(kind)+": "+detail)
		} else {
			e.Action, e.Reason = string(ans.Decision), redact.String(ans.Reason)
		}
		w.rec.Add(e)
	}
	if kind == "" {
		return ans, true, nil
	}
	return ans, false, w.fail(m, phase, kind, detail)
}

// violation applies D14 to a bad answer from m.
func (w *walk) violation(m *member, phase, detail string) error {
	if w.rec.Enabled() {
		w.rec.Add(trace.Event{Family: trace.FamilyDispatch, Hook: string(w.pt.point), Plugin: m.id,
			Phase: phase, Action: "error", Error: redact.String("violation: " + detail)})
	}
	return w.fail(m, phase, KindViolation, detail)
}

// fail applies D13/D14: a required-class (or strategy-phase) failure is
// fatal; an optional one is warned once and skipped.
func (w *walk) fail(m *member, phase string, kind Kind, detail string) error {
	detail = redact.String(detail)
	if m.required || phase == "strategy" {
		return &ExtensionError{Extension: m.id, Point: w.pt.point, Phase: phase, Kind: kind, Detail: detail}
	}
	msg := fmt.Sprintf("optional extension %q %s at %s and was skipped: %s", m.id, kindVerb(kind), w.pt.point, detail)
	if w.d.warn(warnKey{m.index, kind}, Warning{Extension: m.id, Point: w.pt.point, Kind: kind, Message: msg}) {
		w.warnings = append(w.warnings, msg)
	}
	return nil
}

// warn emits wg once per key (D15) and reports whether it did.
func (d *Dispatcher) warn(key warnKey, wg Warning) bool {
	if _, loaded := d.warned.LoadOrStore(key, struct{}{}); loaded {
		return false
	}
	wg.Message = redact.String(wg.Message)
	if d.onWarning != nil {
		d.onWarning(wg)
	} else {
		slog.Default().Warn(wg.Message, "family", "D", "extension", wg.Extension, "point", string(wg.Point), "kind", string(wg.Kind))
	}
	return true
}

var errPanic = errors.New("panic")

func safeCall(ctx context.Context, ext intercept.Extension, point intercept.Point, payload json.RawMessage) (ans intercept.Answer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errPanic, r)
		}
	}()
	return ext.Call(ctx, point, payload)
}

func safeNotify(ext intercept.Extension, point intercept.Point, payload json.RawMessage) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errPanic, r)
		}
	}()
	return ext.Notify(point, payload)
}

// broadcast queues the final payload for every observer (D20) without
// blocking; a full queue, or a Close that won the race with this dispatch,
// drops the event with a warning. hostBytes says payload is the host's own
// buffer (D11), which the host may reuse once Dispatch returns, so the
// queued event takes a copy.
func (d *Dispatcher) broadcast(w *walk, payload json.RawMessage, hostBytes bool) {
	pt := w.pt
	if len(pt.observers) == 0 && len(pt.condObs) == 0 {
		return
	}
	if hostBytes {
		payload = bytes.Clone(payload)
	}
	job := eventJob{pt: pt, payload: payload, tool: w.tool, provider: w.provider}
	if w.rec.Enabled() {
		d.eachObserver(job, func(m *member) {
			w.rec.Add(trace.Event{Family: trace.FamilyDispatch, Hook: string(pt.point), Plugin: m.id,
				Phase: "event", Action: "notify"})
		})
	}
	d.sendMu.RLock()
	closed := d.closed
	queued := false
	if !closed {
		select {
		case d.events <- job:
			queued = true
		default:
		}
	}
	d.sendMu.RUnlock()
	if !queued {
		msg := fmt.Sprintf("event queue full; dropped the %s event (D20)", pt.point)
		if closed {
			msg = fmt.Sprintf("dispatcher closed during the operation; dropped the %s event (D20)", pt.point)
		}
		if d.warn(warnKey{-1, KindEventDrop}, Warning{Point: pt.point, Kind: KindEventDrop, Message: msg}) {
			w.warnings = append(w.warnings, msg)
		}
	}
}

// eachObserver calls f once per extension observing job (D20).
func (d *Dispatcher) eachObserver(job eventJob, f func(*member)) {
	for _, m := range job.pt.observers {
		f(m)
	}
	for i, o := range job.pt.condObs {
		if !o.slot.Applies(job.pt.point, job.tool, job.provider) || slices.Contains(job.pt.observers, o.m) {
			continue
		}
		dup := false
		for _, p := range job.pt.condObs[:i] {
			if p.m == o.m && p.slot.Applies(job.pt.point, job.tool, job.provider) {
				dup = true
				break
			}
		}
		if !dup {
			f(o.m)
		}
	}
}

func (d *Dispatcher) worker() {
	defer close(d.stopped)
	for {
		select {
		case job := <-d.events:
			d.deliver(job)
		case <-d.done:
			for {
				select {
				case job := <-d.events:
					d.deliver(job)
				default:
					return
				}
			}
		}
	}
}

func (d *Dispatcher) setNotifying(n notifying) {
	d.notifyMu.Lock()
	d.notifying = n
	d.notifyMu.Unlock()
}

func (d *Dispatcher) deliver(job eventJob) {
	d.eachObserver(job, func(m *member) {
		if d.abandoned.Load() {
			return // a Close gave up on this worker (D20)
		}
		d.setNotifying(notifying{ext: m.id, point: job.pt.point})
		err := safeNotify(m.ext, job.pt.point, job.payload)
		d.setNotifying(notifying{})
		if err != nil {
			d.warn(warnKey{m.index, KindEventFail}, Warning{Extension: m.id, Point: job.pt.point, Kind: KindEventFail,
				Message: fmt.Sprintf("extension %q failed to take the %s event: %v (D20)", m.id, job.pt.point, err)})
		}
	})
}

// hostPayload checks the host's payload against point (D2) and returns its
// typed form and its bytes. typeOnly skips the validity rules (choice
// D2.host-check).
func hostPayload(point intercept.Point, v any, typeOnly bool) (intercept.Payload, json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		decode := intercept.DecodeStrict
		if typeOnly {
			decode = intercept.DecodeShape
		}
		p, err := decode(point, raw)
		if err != nil {
			return nil, nil, fmt.Errorf("dispatch %s: %w: %v", point, ErrInvalidPayload, err)
		}
		return p, raw, nil
	}
	p := asPayload(v)
	if p == nil {
		return nil, nil, fmt.Errorf("dispatch %s: %w: got %T, want %T", point, ErrWrongPayload, v, intercept.PayloadFor(point))
	}
	if err := p.Validate(point); err != nil {
		if errors.Is(err, ErrWrongPayload) {
			return nil, nil, fmt.Errorf("dispatch %s: %w", point, err)
		}
		if !typeOnly {
			return nil, nil, fmt.Errorf("dispatch %s: %w: %v", point, ErrInvalidPayload, err)
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, nil, fmt.Errorf("dispatch %s: %w: encode: %v", point, ErrInvalidPayload, err)
	}
	return p, b, nil
}

// asPayload returns v as a payload pointer; values are copied.
func asPayload(v any) intercept.Payload {
	switch x := v.(type) {
	case intercept.Payload:
		if x == nil {
			return nil
		}
		return x
	case intercept.InputPayload:
		return &x
	case intercept.AgentStartPayload:
		return &x
	case intercept.ContextPayload:
		return &x
	case intercept.ProviderRequestPayload:
		return &x
	case intercept.ProviderResponsePayload:
		return &x
	case intercept.ToolBeforePayload:
		return &x
	case intercept.ToolAfterPayload:
		return &x
	case intercept.PermissionPayload:
		return &x
	case intercept.CompactionCompletePayload:
		return &x
	case intercept.SessionPayload:
		return &x
	case intercept.SystemPromptPayload:
		return &x
	case intercept.FrontendEventPayload:
		return &x
	}
	return nil
}

func toolName(p intercept.Payload) string {
	switch x := p.(type) {
	case *intercept.ToolBeforePayload:
		return x.Name
	case *intercept.ToolAfterPayload:
		return x.Name
	}
	return ""
}

// decodeReplacement decodes an extension's replacement strictly (D8) and
// returns it with its canonical encoding, which is what later extensions,
// the event and the host see.
func decodeReplacement(point intercept.Point, data json.RawMessage) (intercept.Payload, json.RawMessage, error) {
	if len(data) == 0 {
		return nil, nil, errors.New("replace without a replacement")
	}
	v, err := intercept.DecodeStrict(point, data)
	if err != nil {
		return nil, nil, err
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("re-encode replacement: %w", err)
	}
	return v, canon, nil
}

// sameAsHost reports whether the canonical final payload equals the host's.
func sameAsHost(point intercept.Point, host intercept.Payload, orig, cur json.RawMessage) (bool, error) {
	if bytes.Equal(orig, cur) {
		return true, nil
	}
	canon, err := json.Marshal(host)
	if err != nil {
		return false, err
	}
	return bytes.Equal(canon, cur), nil
}
