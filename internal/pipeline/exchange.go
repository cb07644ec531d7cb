package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/sse"
)

// Request is the request a host hands an exchange: the request as its
// plugins see it (method, URL, the target's parts the host has from the
// transport (P35; a host that has only a URL and a Host header fills them
// with gateway.Request.FillTarget) and headers) and its body.
type Request struct {
	gateway.Request
	// Body is the request body as the host read it; nil for none. The
	// plugins see it only when some plugin reads bodies (P11).
	Body []byte
}

// Stream is an upstream response body that arrives in chunks. Next returns
// the next chunk, valid until the following call; io.EOF (possibly with a
// last chunk) ends the stream, and any other error means it ended early.
type Stream interface {
	Next(ctx context.Context) ([]byte, error)
}

// Upstream is the upstream's answer.
type Upstream struct {
	Status int
	Header http.Header
	// Body is a buffered body. For a text/event-stream response it is cut
	// into frames just like a Stream.
	Body []byte
	// Stream, when set, supplies the body in chunks instead of Body.
	Stream Stream
	// Err, when set, means the upstream did not answer; the exchange ends
	// with an error outcome and status 502.
	Err error
}

// ClientWriter receives everything the client gets, in order: the status and
// headers once, then the body. The runtime calls Flush once per upstream
// chunk of a streamed response, after the blocks that chunk completed and
// before it reads the next one, and once after a buffered body.
type ClientWriter interface {
	WriteHeader(status int, header http.Header)
	Write(p []byte) (int, error)
	Flush()
}

// ExchangeOptions are per-exchange settings.
type ExchangeOptions struct {
	// Trace records one event per hook call when set. With nil the runtime
	// reads no clock per call and allocates nothing for tracing.
	Trace *trace.Recorder
	// Client receives what the client gets. Nil discards it (Result still
	// holds a buffered body).
	Client ClientWriter
	// MaxBody, when positive, bounds what the runtime holds of an upstream
	// body that arrives as a Stream: a buffered body (some plugin reads or
	// writes response bodies, or a streaming plugin gets a non-SSE body
	// whole) and one SSE block. Past it the exchange ends with an error
	// wrapping ErrTooLarge. A body no plugin needs whole is relayed as it
	// arrives and never held.
	MaxBody int
}

// Warning is a problem the runtime handled and reports, such as a refused
// body write (P17) or an unterminated final SSE block.
type Warning struct {
	// Rule is the contract rule involved, if any.
	Rule string `json:"rule,omitempty"`
	// Plugin is the plugin involved, if any.
	Plugin string `json:"plugin,omitempty"`
	Msg    string `json:"msg"`
}

func (w Warning) String() string {
	s := w.Msg
	if w.Plugin != "" {
		s = fmt.Sprintf("plugin %q: %s", w.Plugin, s)
	}
	if w.Rule != "" {
		s = w.Rule + ": " + s
	}
	return s
}

// Shadow is a decision recorded under on_error: observe (P6): a rejection,
// or a panic, that did not change the exchange.
type Shadow struct {
	Plugin string `json:"plugin"`
	Hook   string `json:"hook"`
	// Frame is the frame index for frame calls, -1 otherwise.
	Frame  int    `json:"frame"`
	Status int    `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Error is set when the plugin panicked rather than rejected.
	Error string `json:"error,omitempty"`
}

// Result is how an exchange went.
type Result struct {
	Outcome gateway.Outcome
	// Status and Header are what the client got.
	Status int
	Header http.Header
	// Body is the body the client got for a buffered (or denied) response;
	// nil for a streamed one, and for a body no plugin needed whole, which
	// was relayed as it arrived (Relayed counts it).
	Body []byte
	// Streamed reports whether the response was relayed frame by frame
	// (P18); Frames counts the frames dispatched and Relayed the body bytes
	// relayed.
	Streamed bool
	Frames   int
	Relayed  int64
	// RequestBody is the request body that goes upstream (changed only by
	// the declared request-body writer, P17); nil when denied.
	RequestBody []byte
	// Warnings and Shadows are in the order they happened.
	Warnings []Warning
	Shadows  []Shadow
	// Err is the cause of an error or cancellation outcome: ErrCanceled,
	// ErrUpstream, ErrTooLarge or a *PanicError, wrapped.
	Err error
	// Broken says the upstream body failed (or grew past MaxBody) after
	// the response header went out: the client has part of an answer
	// that looks whole unless the host breaks its connection.
	Broken bool
}

var (
	// ErrCanceled is the cause of a request denied because its context was
	// cancelled mid-chain (P15). The outcome is a deny with status
	// StatusClientClosedRequest and reason ReasonCanceled.
	ErrCanceled = errors.New("pipeline: request cancelled")
	// ErrUpstream wraps an upstream failure (outcome error, status 502) or
	// a stream that ended early.
	ErrUpstream = errors.New("pipeline: upstream failed")
	// ErrTooLarge wraps an upstream body, or SSE block, larger than
	// ExchangeOptions.MaxBody where the runtime would have to hold it.
	ErrTooLarge = errors.New("pipeline: upstream body too large to hold")
)

const (
	// ReasonCanceled is the outcome reason of a cancelled request (P15).
	ReasonCanceled = "request cancelled"
	// StatusClientClosedRequest is the status of a cancelled request; the
	// client is normally gone and never sees it.
	StatusClientClosedRequest = 499
)

// PanicError is a hook panic, which the runtime recovers and turns into an
// error outcome with status 500 naming the plugin (or, under observe, a
// shadow decision).
type PanicError struct {
	Plugin string
	Hook   string
	Value  any
}

func (e *PanicError) Error() string {
	if f, ok := e.Value.(failedCall); ok && !f.Panicked() {
		// An out-of-process plugin whose process exited, was killed or
		// did not answer: that is how it failed, not a panic.
		return fmt.Sprintf("plugin %q failed in %s: %v", e.Plugin, e.Hook, e.Value)
	}
	return fmt.Sprintf("plugin %q panicked in %s: %v", e.Plugin, e.Hook, e.Value)
}

// failedCall is a hook failure that is not necessarily a panic: a plugin
// host's call across a process boundary reports it so (returned through
// FailingHooks, or raised by a public hook, which has no error result).
// Panicked reports whether the plugin panicked after all.
type failedCall interface {
	error
	Panicked() bool
}

type stage uint8

const (
	stNew stage = iota
	stRequested
	stResponded
	stFinished
)

// Exchange drives one HTTP exchange through a chain. Use it from one
// goroutine. The stages are Request, then Respond or Fail when the request
// was allowed, then Finish, always.
type Exchange struct {
	c       *Chain
	gx      *gateway.Exchange
	ctl     *gateway.Control
	rec     *trace.Recorder
	client  ClientWriter
	start   time.Time
	maxBody int
	broken  bool
	pass    respPass // set by each responseWalk

	reqBody []byte // the host's request body
	// wireReq and wireResp are the bodies for the wire under
	// KeepUndeclaredWrites: the host's, or the declared writer's last
	// write; the plugin-facing exchange may hold a kept one instead.
	wireReq, wireResp []byte

	stage      stage
	ran        int // plugins whose OnRequest was dispatched (P26)
	allowed    bool
	ended      bool // outcome decided (deny or error)
	outcome    gateway.Outcome
	err        error
	headerSent bool
	status     int
	header     http.Header
	body       []byte
	streamed   bool
	relayed    int64
	unflushed  bool // a head or bytes went to the client since the last flush
	respMut    bool
	warnings   []Warning
	shadows    []Shadow
	extTrace   []trace.ExtensionDelta // the changes of the call being recorded
	result     *Result
	res        Result // result's storage: one allocation less per exchange
	finishing  bool
	// abandoned says a finisher overran its deadline and was left running
	// (P28, P30): it may still use the plugin-facing exchange, so this
	// exchange is never reset for reuse.
	abandoned bool
	spare     *gateway.Exchange
	spareCtl  *gateway.Control

	// Headers (P32, P33, P34): the host's framing headers of the request
	// and of the upstream's response, the rejection that decided a denial,
	// and, while tracing, the header before the current call.
	reqFraming  framing
	respFraming framing
	rejection   *gateway.Rejection
	rejecting   *gateway.Rejection // the call being recorded's, for its trace event
	snap        http.Header
	snapResp    bool

	// Streaming state.
	ctx     context.Context
	framer  sse.Framer
	scratch []byte
	frames  int
	stopped bool
	emitFn  func([]byte, bool) error
}

// errStop stops the framer when a frame was rejected or the client is gone.
var errStop = errors.New("stop")

// NewExchange starts an exchange of req through c. The exchange takes
// ownership of req's header and body.
func (c *Chain) NewExchange(req Request, opts ExchangeOptions) *Exchange {
	gx, ctl := gateway.NewExchange(c.dir, req.Request)
	e := &Exchange{c: c, gx: gx, ctl: ctl}
	e.init(req, opts)
	return e
}

// init sets up a new exchange of req on e, whose chain and plugin-facing
// exchange are set.
func (e *Exchange) init(req Request, opts ExchangeOptions) {
	e.rec, e.client, e.start, e.reqBody, e.maxBody = opts.Trace, opts.Client, time.Now(), req.Body, opts.MaxBody
	e.reqFraming.take(e.gx.Request.Header)
	if e.c.readsBody { // P11: nil unless some plugin reads bodies
		b := req.Body
		if b == nil {
			b = []byte{}
		}
		e.ctl.SetRequestBody(b)
		e.wireReq = b
	}
	if e.c.opts.KeepUndeclaredWrites {
		e.ctl.KeepUndeclaredWrites(true)
	}
}

// Reset makes e, a finished exchange, a new exchange of req through the
// same chain, as NewExchange does but in e's memory and its plugin-facing
// exchange's, so that a host driving exchanges one after the other
// allocates nothing for the exchange state. It reports whether it did.
//
// It refuses, and e must be dropped, when e is not finished or when one
// of its finishers was abandoned past its deadline (P28, P30): that call
// may still be running on the plugin-facing exchange, which so must
// outlive it; the host starts the next exchange with NewExchange. The
// Result Finish returned lives in e: read what you need of it first.
func (e *Exchange) Reset(req Request, opts ExchangeOptions) bool {
	if e.stage != stFinished || e.abandoned {
		return false
	}
	c, gx, ctl, emitFn := e.c, e.gx, e.ctl, e.emitFn
	scratch := e.scratch[:0]
	ctl.Reset(c.dir, req.Request)
	*e = Exchange{c: c, gx: gx, ctl: ctl, emitFn: emitFn, scratch: scratch}
	e.init(req, opts)
	return true
}

// Run drives a whole exchange: Request, then Respond with up if allowed,
// then Finish. Dry-run and conformance use it.
func (c *Chain) Run(ctx context.Context, req Request, up Upstream, opts ExchangeOptions) *Result {
	e := c.NewExchange(req, opts)
	if e.Request(ctx) {
		e.Respond(ctx, up)
	}
	return e.Finish()
}

// Gateway returns the plugin-facing exchange, for hosts that need to read
// it (for example extensions parsers set).
func (e *Exchange) Gateway() *gateway.Exchange { return e.gx }

// RequestBody returns the request body to send upstream: the host's body,
// or the declared writer's replacement (P17).
func (e *Exchange) RequestBody() []byte {
	if e.c.readsBody && e.c.opts.KeepUndeclaredWrites {
		return e.wireReq // not a kept write (P17)
	}
	if e.c.readsBody {
		return e.gx.RequestBody()
	}
	return e.reqBody
}

func (e *Exchange) warn(rule, plugin, format string, args ...any) {
	e.warnings = append(e.warnings, Warning{Rule: rule, Plugin: plugin, Msg: fmt.Sprintf(format, args...)})
}

// Request runs OnRequest in declaration order (P15) and reports whether the
// request was allowed. A rejection under enforce denies it and no later
// OnRequest runs; the client gets the rejection's status. A context
// cancelled before a plugin's turn denies it with ErrCanceled. Calling
// Request again does nothing but warn.
func (e *Exchange) Request(ctx context.Context) bool {
	if e.stage != stNew {
		e.warn("", "", "Request called again; ignored")
		return e.allowed
	}
	e.stage = stRequested
	done := ctx.Done()
	for i, n := 0, len(e.c.plugins); i < n; {
		next, stop := e.requestFrom(ctx, done, i)
		if stop {
			break
		}
		i = next
	}
	if names := e.reqFraming.restore(e.gx.Request.Header); names != nil {
		e.warn("P32", "", "request header change(s) to %s ignored: framing headers are the host's", strings.Join(names, ", "))
	}
	if e.ended {
		e.sendError()
		return false
	}
	e.allowed = true
	return true
}

func (e *Exchange) requestFrom(ctx context.Context, done <-chan struct{}, from int) (next int, stop bool) {
	i := from
	defer func() {
		if r := recover(); r != nil {
			next, stop = i+1, e.panicked(i, trace.HookOnRequest, -1, false, r)
		}
	}()
	ps := e.c.plugins
	for ; i < len(ps); i++ {
		if done != nil {
			select {
			case <-done:
				e.cancelled(ctx.Err())
				return i, true
			default:
			}
		}
		pl := &ps[i]
		e.ran = i + 1
		e.ctl.Enter(pl.name, gateway.PhaseRequest, pl.wReq, pl.wResp)
		var t0 time.Time
		if e.rec != nil {
			t0 = e.rec.Now()
			e.snap, e.snapResp = e.gx.Request.Header.Clone(), false
		}
		act, err := pl.onRequest(ctx, e.gx)
		if err != nil {
			return i + 1, e.panicked(i, trace.HookOnRequest, -1, false, err)
		}
		if e.after(i, trace.HookOnRequest, act, t0, -1, false) {
			return i + 1, true
		}
	}
	return i, false
}

// after does the bookkeeping of one hook call: writes (P17), mutation,
// rejection (enforce or observe) and the trace. It reports whether the
// stage stops.
func (e *Exchange) after(i int, hook string, act gateway.Action, t0 time.Time, frame int, last bool) bool {
	pl := &e.c.plugins[i]
	mReq, mResp := e.settle(pl)
	if act.Kind == gateway.ActContinue {
		if e.rec != nil {
			e.record(pl, hook, t0, frame, last, "continue", "", 0, false, "", mReq, mResp)
		}
		return false
	}
	status := act.Status
	if status < 400 || status > 599 {
		e.warn("", pl.name, "%s rejected with status %d, outside 400–599; using 403", hook, status)
		status = http.StatusForbidden
	}
	e.rejecting = act.Rejection
	if pl.observe {
		e.shadows = append(e.shadows, Shadow{Plugin: pl.name, Hook: hook, Frame: frame, Status: status, Reason: act.Reason})
		if e.rec != nil {
			e.record(pl, hook, t0, frame, last, "reject", act.Reason, status, true, "", mReq, mResp)
		}
		e.rejecting = nil
		return false
	}
	if e.rec != nil {
		e.record(pl, hook, t0, frame, last, "reject", act.Reason, status, false, "", mReq, mResp)
	}
	e.rejecting = nil
	if !e.ended {
		e.rejection = act.Rejection
	}
	e.end(gateway.OutcomeDeny, status, pl.name, act.Reason, nil)
	return true
}

// settle takes what plugin pl's hook call left on the controller, whether
// it returned or failed: its writes (P17), its extensions and which bodies
// it mutated.
func (e *Exchange) settle(pl *plug) (mReq, mResp bool) {
	mReq, mResp = e.ctl.TakeMutated()
	if ws := e.ctl.TakeWrites(); ws != nil {
		e.noteWrites(ws)
	}
	e.noteExtensions(pl)
	if mResp {
		e.respMut = true
	}
	return mReq, mResp
}

func (e *Exchange) record(pl *plug, hook string, t0 time.Time, frame int, last bool, action, reason string, status int, shadow bool, errStr string, mReq, mResp bool) {
	ev := trace.Event{Family: trace.FamilyPipeline, Direction: e.c.dirName, Hook: hook, Plugin: pl.name,
		Last: last, Action: action, Reason: redactText(reason), Status: status, Shadow: shadow, Error: redactText(errStr),
		Extensions: e.takeExtTrace()}
	switch {
	case mReq:
		ev.Mutated = trace.MutatedRequestBody
	case mResp:
		ev.Mutated = trace.MutatedResponseBody
	}
	if e.snap != nil {
		cur := e.gx.Request.Header
		refuse := refuseFraming
		if e.snapResp {
			cur = e.gx.Response.Header
			if e.headerSent {
				refuse = refuseAll
			}
		}
		ev.Headers = headerChanges(e.snap, cur, e.snapResp, refuse)
		e.snap = nil
	}
	if e.rejecting != nil {
		ev.Rejection = traceRejection(e.rejecting)
	}
	if !t0.IsZero() {
		ev.DurationNS = e.rec.Since(t0)
	}
	if frame >= 0 {
		e.rec.AddFrame(&ev, frame) // the index without an allocation per frame
		return
	}
	e.rec.Add(ev)
}

// redactText removes credentials from trace text (D16, applied to every
// family's trace); it is called only when tracing is on.
func redactText(s string) string {
	if s == "" {
		return s
	}
	return redact.String(s)
}

func (e *Exchange) noteWrites(ws []gateway.Write) {
	rule := "P17"
	if e.finishing {
		rule = "P30"
	}
	for _, w := range ws {
		if w.Applied && e.c.opts.KeepUndeclaredWrites {
			// The declared writer's body is the wire's; a write kept
			// before or after it is not (P17).
			if w.Response {
				e.wireResp = e.gx.ResponseBody()
			} else {
				e.wireReq = e.gx.RequestBody()
			}
		}
		if w.Applied || w.Kept {
			continue
		}
		what := "request"
		if w.Response {
			what = "response"
		}
		e.warn(rule, w.Plugin, "%s body write refused: %s", what, w.Why)
	}
}

// panicked handles a recovered hook panic of plugin i, or a failure it
// returned through FailingHooks, and reports whether the stage stops:
// under observe it is a shadow decision and the chain goes on; under
// enforce the exchange ends with an error (500).
func (e *Exchange) panicked(i int, hook string, frame int, last bool, r any) bool {
	pl := &e.c.plugins[i]
	pe := &PanicError{Plugin: pl.name, Hook: hook, Value: r}
	mReq, mResp := e.settle(pl)
	if pl.observe {
		e.shadows = append(e.shadows, Shadow{Plugin: pl.name, Hook: hook, Frame: frame, Error: pe.Error()})
		e.warn("P6", pl.name, "observed plugin panicked in %s: %v; the chain went on", hook, r)
		if e.rec != nil {
			e.record(pl, hook, time.Time{}, frame, last, "error", "", 0, true, pe.Error(), mReq, mResp)
		}
		return false
	}
	if e.rec != nil {
		e.record(pl, hook, time.Time{}, frame, last, "error", "", 0, false, pe.Error(), mReq, mResp)
	}
	e.end(gateway.OutcomeError, http.StatusInternalServerError, "", pe.Error(), pe)
	return true
}

// cancelled denies the request because ctx was cancelled (P15).
func (e *Exchange) cancelled(cause error) {
	e.end(gateway.OutcomeDeny, StatusClientClosedRequest, "", ReasonCanceled, fmt.Errorf("%w: %w", ErrCanceled, cause))
}

// end decides the outcome; the first decision stands. Once the response
// headers went out, the status stays what the client got.
func (e *Exchange) end(kind gateway.OutcomeKind, status int, by, reason string, err error) {
	if e.ended {
		return
	}
	e.ended = true
	if e.streamed && !e.headerSent {
		// A streamed response's head waits for the first frame's calls
		// (P33); once the exchange ends it goes out as it stands, so that
		// a frame's rejection ends the stream as it always did (P25).
		e.sendStreamHead()
	}
	if e.headerSent {
		status = e.status
	}
	e.outcome = gateway.Outcome{Kind: kind, Status: status, DeniedBy: by, Reason: reason}
	e.err = err
}

// sendError sends the decided deny or error response to the client, unless
// headers already went out.
func (e *Exchange) sendError() {
	if e.headerSent {
		if r := e.rejection; r != nil && (len(r.Header) > 0 || r.Body != nil) {
			e.warn("P34", e.outcome.DeniedBy, "the rejection's headers and body were not sent: the response head had already gone out")
		}
		return
	}
	var h http.Header
	var body []byte
	if r := e.rejection; r != nil && e.outcome.Kind == gateway.OutcomeDeny {
		var dropped []string
		h, body, dropped = rejectionResponse(r, e.outcome.Reason)
		if dropped != nil {
			e.warn("P34", e.outcome.DeniedBy, "rejection header(s) %s dropped: framing headers are the host's", strings.Join(dropped, ", "))
		}
	} else {
		h = http.Header{}
		h.Set("Content-Type", "text/plain; charset=utf-8")
		msg := e.outcome.Reason
		if e.outcome.Kind == gateway.OutcomeError {
			msg = http.StatusText(e.outcome.Status) // internal detail stays in the outcome
		}
		body = []byte(msg + "\n")
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	e.sendHeader(e.outcome.Status, h)
	e.body = body
	e.write(body)
	e.flush()
}

func (e *Exchange) sendHeader(status int, h http.Header) {
	e.headerSent, e.unflushed = true, true
	e.status, e.header = status, h
	if e.client != nil {
		e.client.WriteHeader(status, h)
	}
}

// write relays p to the client; it reports false when the client is gone.
func (e *Exchange) write(p []byte) bool {
	e.relayed += int64(len(p))
	e.unflushed = true
	if e.client == nil {
		return true
	}
	if _, err := e.client.Write(p); err != nil {
		e.warn("", "", "client write failed: %v; stopped relaying", err)
		e.end(gateway.OutcomeError, 0, "", "client write failed", fmt.Errorf("client write: %w", err))
		return false
	}
	return true
}

func (e *Exchange) flush() {
	e.unflushed = false
	if e.client != nil {
		e.client.Flush()
	}
}

// flushPending flushes when something was sent since the last flush.
func (e *Exchange) flushPending() {
	if e.unflushed {
		e.flush()
	}
}

// Fail ends an allowed exchange whose upstream did not answer: outcome
// error, status 502, and OnResponse does not run (P16).
func (e *Exchange) Fail(err error) {
	if e.stage != stRequested || !e.allowed {
		e.warn("", "", "Fail called out of order; ignored")
		return
	}
	e.stage = stResponded
	e.end(gateway.OutcomeError, http.StatusBadGateway, "", "upstream: "+err.Error(), fmt.Errorf("%w: %w", ErrUpstream, err))
	e.sendError()
}

// Respond runs the response side over the plugins whose OnRequest ran, in
// reverse declaration order (P16), and relays the result to the client.
// A text/event-stream response is relayed frame by frame to the streaming
// plugins (P19–P25) unless some plugin writes the response body, in which
// case it is buffered (P18). Respond is ignored (with a warning) unless the
// request was allowed and Respond or Fail has not run yet.
func (e *Exchange) Respond(ctx context.Context, up Upstream) {
	if e.stage != stRequested || !e.allowed {
		e.warn("", "", "Respond called out of order or after a denied request; ignored")
		return
	}
	if up.Err != nil {
		e.Fail(up.Err)
		return
	}
	e.stage = stResponded
	e.ctl.SetResponse(gateway.Response{Status: up.Status, Header: up.Header})
	e.respFraming.take(e.gx.Response.Header)
	if isEventStream(e.gx.Response.Header) && !e.c.writesResp {
		e.respondStream(ctx, up)
		return
	}
	e.respondBuffered(ctx, up)
}

func isEventStream(h http.Header) bool {
	ct := h.Get("Content-Type")
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

func (e *Exchange) respondBuffered(ctx context.Context, up Upstream) {
	if up.Stream != nil && !e.c.readsBody && !e.c.writesResp && len(e.c.streamRev) == 0 {
		e.respondPassthrough(ctx, up)
		return
	}
	body := up.Body
	if up.Stream != nil {
		for {
			chunk, err := up.Stream.Next(ctx)
			if e.maxBody > 0 && len(body)+len(chunk) > e.maxBody {
				e.end(gateway.OutcomeError, http.StatusBadGateway, "", e.tooLarge("upstream response body").Error(), fmt.Errorf("%w: %w", ErrTooLarge, e.tooLarge("upstream response body")))
				e.sendError()
				return
			}
			body = append(body, chunk...)
			if err == io.EOF {
				break
			}
			if err != nil {
				e.end(gateway.OutcomeError, http.StatusBadGateway, "", "upstream body: "+err.Error(), fmt.Errorf("%w: reading body: %w", ErrUpstream, err))
				e.sendError()
				return
			}
		}
	}
	if e.c.readsBody {
		if body == nil {
			body = []byte{}
		}
		e.ctl.SetResponseBody(body)
		e.wireResp = body
	}
	e.body = body
	e.ctx = ctx
	e.responseWalk()
	if names := e.respFraming.restore(e.gx.Response.Header); names != nil {
		e.warn("P33", "", "response header change(s) to %s ignored: framing headers are the host's", strings.Join(names, ", "))
	}
	if e.ended {
		e.sendError()
		return
	}
	out := body
	h := e.gx.Response.Header
	if e.respMut {
		out = e.gx.ResponseBody()
		if e.c.opts.KeepUndeclaredWrites {
			out = e.wireResp // not a kept write (P17)
		}
		h.Del("Content-Length")
	}
	e.sendHeader(e.gx.Response.Status, h)
	e.body = out
	e.write(out)
	e.flush()
	e.end(gateway.OutcomeAllow, e.status, "", "", nil)
}

// tooLarge is the error of a body or block over MaxBody.
func (e *Exchange) tooLarge(what string) error {
	return fmt.Errorf("%s is larger than %d bytes, the most the gateway holds for the plugins that need it whole (docs/limits.md)", what, e.maxBody)
}

// respondPassthrough relays a non-SSE body no plugin needs whole as it
// arrives: the response side runs on the status and headers (the only
// parts such plugins see, P11), then each chunk goes to the client, so
// the body is never held. A rejection there denies before any byte of
// the body is read.
func (e *Exchange) respondPassthrough(ctx context.Context, up Upstream) {
	e.ctx = ctx
	e.responseWalk()
	if e.ended {
		e.sendError()
		return
	}
	e.sendHeader(e.gx.Response.Status, e.gx.Response.Header)
	// A body of unknown length may be a stream of its own (NDJSON, a
	// long poll): each read goes out before the next, as
	// httputil.ReverseProxy does. A body of known length is flushed at
	// its end.
	unknown := e.header.Get("Content-Length") == ""
	for {
		chunk, err := up.Stream.Next(ctx)
		if len(chunk) > 0 && !e.write(chunk) {
			return
		}
		if unknown && err == nil {
			e.flushPending()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			e.flush()
			e.broken = true
			e.end(gateway.OutcomeError, 0, "", "upstream body: "+err.Error(), fmt.Errorf("%w: reading body: %w", ErrUpstream, err))
			return
		}
	}
	e.flush()
	e.end(gateway.OutcomeAllow, e.status, "", "", nil)
}

// responseWalk dispatches a buffered exchange's response to every plugin
// that ran, in reverse (P16, P22): one walk, or with FramesAfterWalk a walk
// of OnResponse and then one of the streamers' frames.
func (e *Exchange) responseWalk() {
	passes := []respPass{passAll}
	if e.c.opts.FramesAfterWalk {
		passes = []respPass{passResponses, passFrames}
	}
	for _, pass := range passes {
		e.pass = pass
		for i := e.ran - 1; i >= 0; {
			next, stop := e.responseFrom(i)
			if stop {
				return
			}
			i = next
		}
	}
}

// respPass is which plugins a response walk calls.
type respPass uint8

const (
	passAll       respPass = iota
	passResponses          // non-streaming plugins only
	passFrames             // streaming plugins only
)

// responseFrom dispatches the response of a buffered exchange from plugin
// index from down to 0: OnResponse, or for a streaming plugin one
// OnResponseFrame with the whole body and last=true (P22, P23).
func (e *Exchange) responseFrom(from int) (next int, stop bool) {
	i := from
	hook := trace.HookOnResponse
	defer func() {
		if r := recover(); r != nil {
			e.poison()
			frame := -1
			if hook == trace.HookOnResponseFrame {
				frame = 0
			}
			next, stop = i-1, e.panicked(i, hook, frame, frame == 0, r)
		}
	}()
	ps := e.c.plugins
	for ; i >= 0; i-- {
		pl := &ps[i]
		if (e.pass == passResponses && pl.stream != nil) || (e.pass == passFrames && pl.stream == nil) {
			continue
		}
		// The P22 call is entered as the response phase so that a streaming
		// response-body writer can still write the buffered body.
		e.ctl.Enter(pl.name, gateway.PhaseResponse, pl.wReq, pl.wResp)
		var t0 time.Time
		if e.rec != nil {
			t0 = e.rec.Now()
			e.snap, e.snapResp = e.gx.Response.Header.Clone(), true
		}
		if pl.stream != nil {
			hook = trace.HookOnResponseFrame
			frame := e.body
			if e.c.readsBody {
				frame = e.gx.ResponseBody()
			}
			frame = e.borrow(frame)
			act, err := pl.onResponseFrame(e.ctx, e.gx, frame, true)
			e.poison()
			if err != nil {
				return i - 1, e.panicked(i, hook, 0, true, err)
			}
			if e.after(i, hook, act, t0, 0, true) {
				return i - 1, true
			}
			continue
		}
		hook = trace.HookOnResponse
		act, err := pl.onResponse(e.ctx, e.gx)
		if err != nil {
			e.poison() // as the deferred recovery does
			return i - 1, e.panicked(i, hook, -1, false, err)
		}
		if e.after(i, hook, act, t0, -1, false) {
			return i - 1, true
		}
	}
	return i, false
}

// borrow returns the bytes to hand a plugin as a frame: b itself, or with
// PoisonFrames a copy in the scratch buffer (P24).
func (e *Exchange) borrow(b []byte) []byte {
	if !e.c.opts.PoisonFrames || b == nil {
		return b
	}
	e.scratch = append(e.scratch[:0], b...)
	return e.scratch
}

// poison overwrites the scratch buffer after a frame's dispatch (P24).
func (e *Exchange) poison() {
	if e.c.opts.PoisonFrames {
		s := e.scratch[:cap(e.scratch)]
		for i := range s {
			s[i] = PoisonByte
		}
	}
}
