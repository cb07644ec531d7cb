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
	"strconv"
	"strings"
	"time"

	"github.com/abkit/abkit/sdk/sse"
)

// errStopped ends the framing of a stream a stage stopped.
var errStopped = errors.New("stopped")

// Request is what the client sent: the URL and its parts as the host has
// them (Scheme empty when unknown, Path unescaped, RawQuery without "?").
// Stages change Header in place; its framing headers stay the pipe's.
type Request struct {
	Method, URL                              string
	Scheme, Host, Path, RawQuery, RemoteAddr string
	Header                                   http.Header
	Body                                     []byte
}

// Identity is who the exchange is for, as a stage verified it.
type Identity struct {
	Subject  string         `json:"subject"`
	ClientID string         `json:"client_id,omitempty"`
	Scopes   []string       `json:"scopes,omitempty"`
	Claims   map[string]any `json:"claims,omitempty"`
}

// Response is what the upstream answered. Next, when set, streams the
// body chunk by chunk (io.EOF at the end) instead of Body. Stages change
// Header in place until the head is sent; later they get a copy, and a
// change to it is refused with a warning.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	Next   func(ctx context.Context) ([]byte, error)
}

// Verdict is a stage's answer: Stop ends the exchange with Status and
// Text, sent as plain text unless Body is set (of content type Type, or
// Header's, or plain text); Header goes with it (its framing headers are
// the pipe's).
type Verdict struct {
	Stop       bool
	Status     int
	Text, Type string
	Header     http.Header
	Body       []byte
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
	ex    *exchange
}

// Identity is the exchange's identity, ok false until a stage set one.
func (c *Call) Identity() (Identity, bool) {
	if c.ex.ident == nil {
		return Identity{}, false
	}
	return *c.ex.ident, true
}

// ResponseHeader is the response header the stage may change in place: a
// copy once the head was sent, a throwaway before the upstream answered.
func (c *Call) ResponseHeader() http.Header {
	if c.Resp == nil {
		return http.Header{}
	}
	return c.Resp.Header
}

// SetIdentity sets (or replaces) the identity every later step of this
// exchange sees, Done included.
func (c *Call) SetIdentity(id Identity) { c.ex.ident = &id }

// Warning is something the pipe let pass but tells about.
type Warning struct {
	// Code: refused-write, observed, unterminated, finish-failed,
	// finished-twice, request-header, response-header, rejection.
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
	SentHeader http.Header // the request header sent upstream; nil if none was
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
	ex.call.warn, ex.call.ex = &ex.res.Warnings, ex
	if req.Header == nil {
		req.Header = http.Header{}
	}
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
	ident    *Identity
	rej      Verdict // the stop that ended the exchange
	// headSent: the client has the response head, which is sent.
	headSent bool
	sent     http.Header
}

// framing are the headers that describe the message as the pipe frames
// it: a stage's change to one is undone.
var framing = []string{"Content-Length", "Content-Encoding", "Transfer-Encoding", "Trailer", "Te",
	"Connection", "Keep-Alive", "Upgrade", "Proxy-Connection"}

// keepFraming undoes every change to h's framing headers since snap,
// reporting each under code.
func (e *exchange) keepFraming(h, snap http.Header, code string) {
	for _, n := range framing {
		if v := snap.Values(n); !slices.Equal(h.Values(n), v) {
			e.warn(code, "", fmt.Sprintf("change to framing header %s refused: it is the pipe's", n))
			if h.Del(n); v != nil {
				h[n] = v
			}
		}
	}
}

// late undoes (by dropping c's copy) and reports the response header
// changes a stage made after the head was sent.
func (e *exchange) late(s *Stage, c *Call) {
	if c.Resp == nil || !e.headSent {
		return
	}
	var names []string
	for n, v := range c.Resp.Header {
		if !slices.Equal(v, e.sent[n]) {
			names = append(names, n)
		}
	}
	for n := range e.sent {
		if _, ok := c.Resp.Header[n]; !ok {
			names = append(names, n)
		}
	}
	if len(names) > 0 {
		slices.Sort(names)
		e.warn("response-header", s.Name, fmt.Sprintf("response header change to %s refused: made after the response head was sent", strings.Join(names, ", ")))
	}
}

// head sends the response head.
func (e *exchange) head(resp *Response) {
	for k, v := range resp.Header {
		e.w.Header()[k] = slices.Clone(v)
	}
	e.headSent, e.sent = true, resp.Header.Clone()
	e.w.WriteHeader(resp.Status)
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
	if !e.ended {
		e.rej = v
	}
	e.end("deny", v.Status, s.Name, v.Text)
	return true
}

// reply sends the end of an exchange that got no response: the reason as
// text, or a rejection's body, with the rejection's headers.
func (e *exchange) reply() {
	h, body := e.w.Header(), []byte(e.res.Reason)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	for k, v := range e.rej.Header {
		if slices.Contains(framing, http.CanonicalHeaderKey(k)) {
			e.warn("rejection", e.res.By, "rejection header "+k+" dropped: framing headers are the pipe's")
			continue
		}
		h[http.CanonicalHeaderKey(k)] = slices.Clone(v)
	}
	if e.rej.Body != nil && e.rej.Type != "" {
		h.Set("Content-Type", e.rej.Type)
	}
	if e.rej.Body != nil {
		body = e.rej.Body
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	e.headSent = true
	e.w.WriteHeader(e.res.Status)
	_, _ = e.w.Write(body)
}

func (e *exchange) run(ctx context.Context, up func(context.Context, *Request) (*Response, error)) {
	snap := e.call.Req.Header.Clone()
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
	e.keepFraming(e.call.Req.Header, snap, "request-header")
	e.res.SentBody, e.res.SentHeader = bytes.Clone(e.call.Req.Body), e.call.Req.Header.Clone()
	resp, err := up(ctx, e.call.Req)
	if err != nil {
		e.end("error", 502, "", "upstream failed")
		e.reply()
		return
	}
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	e.call.Resp, snap = resp, resp.Header.Clone()
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
	e.keepFraming(resp.Header, snap, "response-header")
	e.head(resp)
	_, _ = e.w.Write(resp.Body)
}

// stageCall is s's view: no response body unless buffered, and a copy of
// the response header once the head was sent.
func (e *exchange) stageCall(s *Stage) *Call {
	c := e.call
	c.stage = s
	if c.Resp != nil && (!e.buffered || e.headSent) {
		r := *c.Resp
		if !e.buffered {
			r.Body = nil
		}
		if e.headSent {
			r.Header = r.Header.Clone()
		}
		c.Resp = &r
	}
	return &c
}

// stream relays an event stream as it comes, each complete event a frame
// for the streaming stages (in reverse), then one last call each. The head
// waits for the first frame's dispatch (or the first bytes relayed), so
// that the first frame calls may still change the response header.
func (e *exchange) stream(ctx context.Context, resp *Response) {
	snap := resp.Header.Clone()
	head := func() {
		if !e.headSent {
			e.keepFraming(resp.Header, snap, "response-header")
			e.head(resp)
		}
	}
	e.res.Streamed = true
	var streamers []*Stage
	for _, s := range slices.Backward(e.seen) {
		if s.Chunk != nil {
			streamers = append(streamers, s)
		}
	}
	e.end("allow", resp.Status, "", "")
	e.ended = false // a stream can still end in a deny or an error
	stopped := false
	dispatch := func(frame []byte, last bool) {
		for _, s := range streamers {
			if e.panicked[s] || (stopped && !last) {
				continue // a panicking stage is not called again
			}
			c := e.stageCall(s)
			if e.step(s, func() Verdict { return s.Chunk(ctx, c, frame, last) }) {
				stopped = true
			}
			e.late(s, c)
		}
	}
	var fr sse.Framer
	emit := func(raw []byte, event bool) error {
		if event {
			e.res.Frames++
			dispatch(bytes.Clone(raw), false)
		}
		if head(); stopped {
			return errStopped
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
	head()
	dispatch(nil, true)
	if e.rej.Header != nil || e.rej.Body != nil {
		e.warn("rejection", e.res.By, "a rejection in a stream cannot send its headers and body: dropped")
	}
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
			c := e.stageCall(s)
			if err := s.Done(ctx, c); err != nil {
				e.warn("finish-failed", s.Name, "finish: "+err.Error())
			}
			e.late(s, c)
		}()
	}
}
