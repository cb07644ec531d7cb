// Package minipipe is a small request/response pipeline, written for this
// repository as a runtime foreign to abkit's: its own types, and of abkit
// only the public SSE framer (sdk/sse). Stages see the request in order,
// the response in reverse, each event of a streamed response in reverse,
// and are finished last-in first-out with a fresh context. Its adapter to
// the runtime conformance suite is ./cmd/minipipe-runtime.
package minipipe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/abkit/abkit/sdk/sse"
)

// errStopped ends the framing of a stream a stage stopped.
var errStopped = errors.New("stopped")

// Request is what the client sent.
type Request struct {
	Method, URL string
	Header      http.Header
	Body        []byte
}

// Response is what the upstream answered. Next, when set, streams the
// body chunk by chunk (io.EOF at the end) instead of Body.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	Next   func(ctx context.Context) ([]byte, error)
}

// Verdict is a stage's answer: Stop ends the exchange with Status and Text.
type Verdict struct {
	Stop   bool
	Status int
	Text   string
}

// Call is one stage's view of an exchange.
type Call struct {
	Index int
	Bag   map[string]string // per exchange, shared by the stages
	Req   *Request
	Resp  *Response // nil before the upstream answered
	Done  *Result   // nil until the exchange is over
	stage *Stage
	warn  *[]Warning
}

// Warning is something the pipe let pass but tells about.
type Warning struct {
	// Code: refused-write, observed, unterminated, finish-failed,
	// finished-twice.
	Code, Stage, Text string
}

// SetRequestBody replaces the body sent upstream; only a stage declaring
// WritesRequest may, others are refused with a warning.
func (c *Call) SetRequestBody(b []byte) { c.write(c.stage.WritesRequest, &c.Req.Body, b, "request") }

// SetResponseBody replaces a buffered response's body, likewise.
func (c *Call) SetResponseBody(b []byte) {
	if c.Resp != nil {
		c.write(c.stage.WritesResponse, &c.Resp.Body, b, "response")
	}
}

func (c *Call) write(ok bool, dst *[]byte, b []byte, what string) {
	if !ok || c.Done != nil {
		*c.warn = append(*c.warn, Warning{"refused-write", c.stage.Name, what + " body write refused"})
		return
	}
	*dst = bytes.Clone(b)
}

// Stage is one step of the pipe. Nil functions are steps it does not take.
type Stage struct {
	Name                                 string
	Reads, WritesRequest, WritesResponse bool
	Requires, RequiresAny                []string
	// Observe: the stage's stops are ignored (with a warning).
	Observe            bool
	Before, After      func(ctx context.Context, c *Call) Verdict
	Chunk              func(ctx context.Context, c *Call, frame []byte, last bool) Verdict
	Done               func(ctx context.Context, c *Call) error
	Open, Close, Ready func(ctx context.Context) error
}

// Result is how an exchange ended.
type Result struct {
	Kind       string // allow, deny, error
	Status     int
	By, Reason string
	Took       time.Duration
	Streamed   bool
	Frames     int
	SentBody   []byte
	Warnings   []Warning
	Cancelled  bool
}

// Pipe is a built chain.
type Pipe struct {
	Stages []*Stage
	Options
	opened int // stages whose Open succeeded
}

// Options configure a pipe.
type Options struct {
	// FinishTimeout bounds each Done; zero means 2 s.
	FinishTimeout time.Duration
	// Waypoint: the pipe sits where bodies are not its to change, so a
	// body writer is refused.
	Waypoint bool
}

// Problem is one reason a chain does not build.
type Problem struct {
	// Kind: no-name, twice, requires, writer, waypoint-writer.
	Kind, Stage, Text string
}

func (p *Problem) Error() string { return p.Stage + ": " + p.Text }

// New checks the chain: names present and unique, requirements earlier in
// the chain, one body writer per direction (none at a waypoint). Every
// problem is reported, joined.
func New(stages []*Stage, o Options) (*Pipe, error) {
	var errs []error
	bad := func(kind, stage, f string, a ...any) {
		errs = append(errs, &Problem{kind, stage, fmt.Sprintf(f, a...)})
	}
	seen, all := map[string]bool{}, map[string]bool{}
	for _, s := range stages {
		all[s.Name] = true
	}
	var wReq, wResp string
	for _, s := range stages {
		switch {
		case s.Name == "":
			bad("no-name", "", "a stage has no name")
		case seen[s.Name]:
			bad("twice", s.Name, "named twice")
		}
		for _, r := range s.Requires {
			if !seen[r] {
				bad("requires", s.Name, "requires %s earlier in the chain", r)
			}
		}
		if len(s.RequiresAny) > 0 && !slices.ContainsFunc(s.RequiresAny, func(r string) bool { return all[r] }) {
			bad("requires-any", s.Name, "requires one of %v earlier in the chain", s.RequiresAny)
		}
		for _, r := range s.RequiresAny {
			if all[r] && !seen[r] {
				bad("requires-any", s.Name, "%s stands later in the chain", r)
			}
		}
		if s.Reads && wReq+wResp != "" {
			bad("writer", s.Name, "reads a body after its writer %s", wReq+wResp)
		}
		if o.Waypoint && (s.WritesRequest || s.WritesResponse) {
			bad("waypoint-writer", s.Name, "writes a body, which a waypoint does not allow")
		}
		for _, w := range []struct {
			on  bool
			cur *string
		}{{s.WritesRequest, &wReq}, {s.WritesResponse, &wResp}} {
			if w.on && *w.cur != "" {
				bad("writer", s.Name, "a second body writer after %s", *w.cur)
			} else if w.on {
				*w.cur = s.Name
			}
		}
		seen[s.Name] = true
	}
	if o.FinishTimeout <= 0 {
		o.FinishTimeout = 2 * time.Second
	}
	return &Pipe{Stages: stages, Options: o}, errors.Join(errs...)
}

// Open opens the stages in order; the first error stops it.
func (p *Pipe) Open(ctx context.Context) error {
	for _, s := range p.Stages {
		if s.Open != nil {
			if err := s.Open(ctx); err != nil {
				return fmt.Errorf("%s: open: %w", s.Name, err)
			}
		}
		p.opened++
	}
	return nil
}

// Close closes the opened stages in reverse, each one even after an error.
func (p *Pipe) Close(ctx context.Context) error {
	var errs []error
	for _, s := range slices.Backward(p.Stages[:p.opened]) {
		if s.Close != nil {
			if err := s.Close(ctx); err != nil {
				errs = append(errs, fmt.Errorf("%s: close: %w", s.Name, err))
			}
		}
	}
	p.opened = 0
	return errors.Join(errs...)
}

// Ready reports every stage that is not ready; safe to call concurrently.
func (p *Pipe) Ready(ctx context.Context) error {
	var errs []error
	for _, s := range p.Stages {
		if s.Ready != nil {
			if err := s.Ready(ctx); err != nil {
				errs = append(errs, fmt.Errorf("%s: not ready: %w", s.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Serve runs one exchange: the request stages in order, the upstream, the
// response stages in reverse (or the stream's frames), writing what the
// client gets to w. Finish the exchange it returns.
func (p *Pipe) Serve(ctx context.Context, idx int, req *Request, up func(context.Context, *Request) (*Response, error), w http.ResponseWriter) *Exchange {
	t0 := time.Now()
	ex := &exchange{p: p, w: w, panicked: map[*Stage]bool{}, call: Call{Index: idx, Bag: map[string]string{}, Req: req}}
	ex.call.warn = &ex.res.Warnings
	buffered := slices.ContainsFunc(p.Stages, func(s *Stage) bool { return s.Reads || s.WritesRequest || s.WritesResponse })
	if !buffered {
		body := req.Body
		defer func() { req.Body = body }()
		req.Body = nil
	}
	ex.buffered = buffered
	ex.run(ctx, up)
	ex.res.Took = time.Since(t0)
	return &Exchange{e: ex}
}

// Exchange is a served exchange, waiting for Finish.
type Exchange struct {
	e    *exchange
	done bool
}

// Finish finishes every stage that saw the request, last first, and
// returns how the exchange ended. A second Finish only warns.
func (x *Exchange) Finish() Result {
	if x.done {
		x.e.warn("finished-twice", "", "exchange finished twice; ignored")
	} else {
		x.done = true
		x.e.finish()
	}
	return x.e.res
}

type exchange struct {
	p        *Pipe
	w        http.ResponseWriter
	call     Call
	res      Result
	ended    bool
	seen     []*Stage // stages whose Before ran
	panicked map[*Stage]bool
	// buffered: some stage reads or writes bodies, so all see them.
	buffered bool
}

func (e *exchange) warn(code, stage, text string) {
	e.res.Warnings = append(e.res.Warnings, Warning{code, stage, text})
}

func (e *exchange) end(kind string, status int, by, reason string) {
	if !e.ended {
		e.ended, e.res.Kind, e.res.Status, e.res.By, e.res.Reason = true, kind, status, by, reason
	}
}

// step runs one stage step, turning a panic into an error outcome.
func (e *exchange) step(s *Stage, f func() Verdict) (stop bool) {
	defer func() {
		if r := recover(); r != nil {
			if s.Observe {
				e.warn("observed", s.Name, fmt.Sprintf("panicked (observed): %v", r))
				stop = false
				return
			}
			e.end("error", 500, "", fmt.Sprintf("%s panicked: %v", s.Name, r))
			e.panicked[s], stop = true, true
		}
	}()
	v := f()
	if !v.Stop {
		return false
	}
	if s.Observe {
		e.warn("observed", s.Name, "stopped the exchange (observed, ignored)")
		return false
	}
	e.end("deny", v.Status, s.Name, v.Text)
	return true
}

func (e *exchange) reply() {
	e.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	e.w.WriteHeader(e.res.Status)
	_, _ = io.WriteString(e.w, e.res.Reason)
}

func (e *exchange) run(ctx context.Context, up func(context.Context, *Request) (*Response, error)) {
	for _, s := range e.p.Stages {
		if ctx.Err() != nil {
			e.end("deny", 499, "", "request cancelled")
			e.res.Cancelled = true
			e.reply()
			return
		}
		e.seen = append(e.seen, s)
		if s.Before != nil && e.step(s, func() Verdict { return s.Before(ctx, e.stageCall(s)) }) {
			e.reply()
			return
		}
	}
	e.res.SentBody = bytes.Clone(e.call.Req.Body)
	resp, err := up(ctx, e.call.Req)
	if err != nil {
		e.end("error", 502, "", "upstream failed")
		e.reply()
		return
	}
	e.call.Resp = resp
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.Next != nil && strings.EqualFold(ct, "text/event-stream") && !slices.ContainsFunc(e.p.Stages, func(s *Stage) bool { return s.WritesResponse }) {
		e.stream(ctx, resp)
		return
	}
	if resp.Next != nil { // buffer it
		var b bytes.Buffer
		for {
			c, err := resp.Next(ctx)
			if err == io.EOF {
				break
			} else if err != nil {
				e.end("error", 502, "", "upstream body broke")
				e.reply()
				return
			}
			b.Write(c)
		}
		resp.Body, resp.Next = b.Bytes(), nil
	}
	for _, s := range slices.Backward(e.seen) {
		f := s.After
		if s.Chunk != nil { // a streaming stage gets a buffered body as one last frame
			f = func(ctx context.Context, c *Call) Verdict { return s.Chunk(ctx, c, resp.Body, true) }
		}
		if f != nil && e.step(s, func() Verdict { return f(ctx, e.stageCall(s)) }) {
			e.reply()
			return
		}
	}
	e.end("allow", resp.Status, "", "")
	for k, v := range resp.Header {
		e.w.Header()[k] = v
	}
	e.w.WriteHeader(resp.Status)
	_, _ = e.w.Write(resp.Body)
}

func (e *exchange) stageCall(s *Stage) *Call {
	c := e.call
	c.stage = s
	if !e.buffered {
		c.Resp = nil
	}
	return &c
}

// stream relays an event stream as it comes, each complete event a frame
// for the streaming stages (in reverse), then one last call each.
func (e *exchange) stream(ctx context.Context, resp *Response) {
	e.res.Streamed = true
	var streamers []*Stage
	for _, s := range slices.Backward(e.seen) {
		if s.Chunk != nil {
			streamers = append(streamers, s)
		}
	}
	for k, v := range resp.Header {
		e.w.Header()[k] = v
	}
	e.w.WriteHeader(resp.Status)
	e.end("allow", resp.Status, "", "")
	e.ended = false // a stream can still end in a deny or an error
	stopped := false
	dispatch := func(frame []byte, last bool) {
		for _, s := range streamers {
			if e.panicked[s] || (stopped && !last) {
				continue // a panicking stage is not called again
			}
			if e.step(s, func() Verdict { return s.Chunk(ctx, e.stageCall(s), frame, last) }) {
				stopped = true
			}
		}
	}
	var fr sse.Framer
	emit := func(raw []byte, event bool) error {
		if event {
			e.res.Frames++
			if dispatch(bytes.Clone(raw), false); stopped {
				return errStopped
			}
		}
		_, _ = e.w.Write(raw)
		return nil
	}
	for !stopped {
		chunk, err := resp.Next(ctx)
		if err == io.EOF {
			if n, _ := fr.End(emit); n > 0 {
				e.warn("unterminated", "", fmt.Sprintf("unterminated final event (%d bytes): relayed, not dispatched", n))
			}
			break
		}
		if err != nil {
			e.end("error", resp.Status, "", "upstream stream broke: "+err.Error())
			break
		}
		_ = fr.Feed(chunk, emit)
	}
	dispatch(nil, true)
	e.end("allow", resp.Status, "", "")
}

// finish calls every stage that saw the request, last first, each with a
// fresh context bounded by the finish timeout.
func (e *exchange) finish() {
	done := e.res
	e.call.Done = &done
	for _, s := range slices.Backward(e.seen) {
		if s.Done == nil {
			continue
		}
		func() {
			ctx, cancel := context.WithTimeout(context.Background(), e.p.FinishTimeout)
			defer cancel()
			defer func() {
				if r := recover(); r != nil {
					e.warn("finish-failed", s.Name, fmt.Sprintf("finish panicked: %v", r))
				}
			}()
			if err := s.Done(ctx, e.stageCall(s)); err != nil {
				e.warn("finish-failed", s.Name, "finish: "+err.Error())
			}
		}()
	}
}
