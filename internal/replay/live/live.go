// Package live runs a plugin chain on the reference runtime
// (internal/pipeline) as a local reverse proxy in front of a real upstream:
// the engine of abctl serve. Every request goes through the chain's
// request side, then to the upstream, and the upstream's answer through the
// response side back to the client; a text/event-stream response is relayed
// frame by frame as the upstream sends it.
//
// Each finished exchange is kept, redacted, in a ring of the last N
// exchanges with its trace (the report of docs/replay.md), served by a
// read-only API under APIPrefix on the same listener, and announced on an
// event stream (docs/live.md). With a record directory, each finished
// exchange is also written as a fixture that abctl replay reproduces.
package live

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/netlimit"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/replay/record"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// APIPrefix is the reserved path of the read-only API. Requests under it
// are answered by the server itself and never reach the chain or the
// upstream.
const APIPrefix = "/_abkit/"

// Defaults of Options, and the most abctl serve accepts.
const (
	DefaultRing    = 500
	DefaultBodyCap = 64 << 10
	MaxRing        = 100_000
	MaxBodyCap     = 32 << 20
)

// Options configure a Server.
type Options struct {
	// Upstream is the base URL every request is forwarded to.
	Upstream string
	// Chain is the started chain exchanges run through. The server does
	// not stop it.
	Chain *replay.Chain
	// ChainFile is the file Chain was built from; /v1/pipeline shows its
	// entries (configs redacted).
	ChainFile *catalog.ChainFile
	// Factories are the registered plugins; /v1/plugins shows the config
	// schema of each plugin in the chain.
	Factories []gateway.Factory
	// RecordDir, when set, receives every finished exchange as a fixture.
	RecordDir string
	// Ring is how many finished exchanges the API keeps (DefaultRing).
	Ring int
	// BodyCap is how many bytes of each request and response body the API
	// keeps per exchange (DefaultBodyCap); a longer body is cut there and
	// marked truncated. Fixtures written to RecordDir are not capped
	// (up to fixture.MaxBody()).
	BodyCap int
	// Log receives warnings; nil discards them.
	Log *slog.Logger
	// Limits bound the clients' connections: header, body, idle and
	// write timeouts and the number of connections (netlimit defaults).
	Limits netlimit.Limits
	// APIToken, when set, is required of every API request: as a bearer
	// token (Authorization: Bearer TOKEN) or as the password of basic
	// authentication (http://:TOKEN@host/, what ui --attach sends). serve
	// sets one whenever it listens beyond loopback.
	APIToken string
	// NoAPI turns the API off: every path under APIPrefix is 404.
	NoAPI bool
	// EventWriteTimeout is how long one write to a /v1/events subscriber
	// may block before it is cut (DefaultEventWriteTimeout).
	EventWriteTimeout time.Duration

	// queue replaces MaxQueued and writeGate runs before each fixture is
	// written: tests hold the writer.
	queue     int
	writeGate func()
}

// MaxQueued is how many fixtures may wait to be written with --record.
// Past it an exchange waits for a place before its handler returns: a
// disk slower than the traffic slows the clients (their connections'
// next requests, a stream's last chunk) instead of filling memory.
const MaxQueued = 256

// Server is an http.Handler: the API under APIPrefix, the proxy elsewhere.
type Server struct {
	opts     Options
	chain    *pipeline.Chain
	upstream *url.URL
	// transport sends requests upstream; a Client's redirect and header
	// bookkeeping is not needed, serve relays a redirect as it came.
	transport *http.Transport
	// source is the fixtures' source line, redacted once.
	source string
	// traceRoom is about how many trace events an exchange records
	// (request, response and finish calls of each plugin), so its trace
	// grows once.
	traceRoom int
	// streamRoom is how many trace events the last streamed exchange
	// recorded (at most maxStreamRoom): a streamed answer's trace is
	// made room for at once when its head arrives (a trace event per
	// plugin and frame), instead of growing block by block and being
	// joined into one slice at the end.
	streamRoom atomic.Int64
	log        *slog.Logger
	now        func() time.Time

	ids     atomic.Uint64 // exchange ids, from 1
	fileSeq atomic.Int64
	ring    *ring
	events  *broker

	inflight sync.WaitGroup
	// cutCtx is every request's base context; cutting it ends the
	// exchanges still in flight when the shutdown grace period is over.
	cutCtx context.Context
	cut    context.CancelCauseFunc

	// streams holds upstream readers with their 32 KiB read buffers: the
	// runtime is done with a chunk when Respond returns (the capture keeps
	// copies), so one reader serves exchange after exchange.
	streams sync.Pool

	// writers bounds the fixtures written at once (record.Writers): the
	// rest wait, parked, after their clients have their answers, so
	// writing does not take the CPU of the exchanges in flight. durable
	// syncs their files in groups, as abctl record does.
	writers chan struct{}
	durable record.Durable
	// queued holds a place for each fixture waiting to be written or
	// being written (MaxQueued); queueFull counts the exchanges that
	// found it full and waited.
	queued    chan struct{}
	queueFull atomic.Int64

	served   atomic.Int64
	cutN     atomic.Int64
	recorded atomic.Int64
}

// ErrCut is the cause of an exchange ended because the server stopped
// while it was in flight.
var ErrCut = errors.New("abctl serve stopped: the exchange was still in flight when the shutdown grace period ended")

// New checks opts and returns a server.
func New(opts Options) (*Server, error) {
	u, err := url.Parse(opts.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %q: want an http:// or https:// URL with a host", redact.URL(opts.Upstream))
	}
	if opts.Chain == nil {
		return nil, errors.New("live: no chain")
	}
	if opts.Ring <= 0 {
		opts.Ring = DefaultRing
	}
	if opts.BodyCap <= 0 {
		opts.BodyCap = DefaultBodyCap
	}
	if opts.EventWriteTimeout <= 0 {
		opts.EventWriteTimeout = DefaultEventWriteTimeout
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Identity bodies, as record asks: the chain and the fixtures see
	// readable text.
	tr.DisableCompression = true
	tr.MaxIdleConnsPerHost = 256
	s := &Server{opts: opts, chain: opts.Chain.Chain, upstream: u, log: log, now: time.Now,
		ring: newRing(opts.Ring), events: newBroker(), transport: tr, writers: make(chan struct{}, record.Writers),
		source: "abctl serve --upstream " + redact.URL(u.String()), traceRoom: 3 * len(opts.Chain.Chain.Names())}
	if opts.queue <= 0 {
		opts.queue = MaxQueued
	}
	s.queued = make(chan struct{}, opts.queue)
	s.streams.New = func() any { return &upstreamStream{buf: make([]byte, 32<<10)} }
	s.cutCtx, s.cut = context.WithCancelCause(context.Background())
	return s, nil
}

// SetAPIToken sets Options.APIToken; call it before Serve.
func (s *Server) SetAPIToken(token string) { s.opts.APIToken = token }

// Stats are the server's counters.
type Stats struct {
	// Served counts finished exchanges, Cut those ended by a shutdown,
	// Recorded the fixtures written.
	Served, Cut, Recorded int64
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	return Stats{Served: s.served.Load(), Cut: s.cutN.Load(), Recorded: s.recorded.Load()}
}

// Serve serves on ln until ctx ends, then stops: the event streams end,
// no new connection is accepted, exchanges in flight get grace to finish
// and are then cut (their context ends with ErrCut, which their trace and
// outcome report), and Serve returns once every exchange and fixture
// write has ended. It returns an error only when the listener fails.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := s.opts.Limits.Server(s)
	srv.BaseContext = func(net.Listener) context.Context { return s.cutCtx }
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(s.opts.Limits.Listener(ln)) }()
	select {
	case err := <-errc:
		s.cut(err)
		s.inflight.Wait()
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	// Event streams never go idle; end them first so Shutdown can.
	s.events.close()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	err := srv.Shutdown(sctx)
	cancel()
	if err != nil {
		s.cut(ErrCut)
		_ = srv.Close()
	}
	s.inflight.Wait()
	return nil
}

// Wait returns when no exchange or fixture write is in flight.
func (s *Server) Wait() { s.inflight.Wait() }

// ServeHTTP answers the API under APIPrefix and proxies everything else.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, APIPrefix) {
		if s.apiAllowed(w, r) {
			s.api(w, r)
		}
		return
	}
	s.inflight.Add(1)
	defer s.inflight.Done()
	s.proxy(w, r)
}

// apiAllowed answers an API request that NoAPI or APIToken refuses and
// reports whether to serve it.
func (s *Server) apiAllowed(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.NoAPI {
		apiError(w, http.StatusNotFound, "the abkit API is off on this serve (--no-api)")
		return false
	}
	if s.opts.APIToken == "" {
		return true
	}
	got := ""
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		got = strings.TrimSpace(a[7:])
	} else if _, pw, ok := r.BasicAuth(); ok {
		got = pw
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.APIToken)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="abctl serve"`)
		apiError(w, http.StatusUnauthorized, "the abkit API needs the token serve printed at start (or --api-token): Authorization: Bearer TOKEN, or http://:TOKEN@HOST/ for ui --attach")
		return false
	}
	return true
}

// capture keeps the upstream's body as it arrived, up to limit bytes.
type capture struct {
	limit  int
	size   int
	over   bool
	chunks []fixture.Chunk
}

func (c *capture) add(at time.Duration, b []byte) {
	c.size += len(b)
	if c.over {
		return
	}
	if c.size > c.limit {
		c.over = true
		return
	}
	c.chunks = append(c.chunks, fixture.Chunk{At: at, Data: bytes.Clone(b)})
}

// upstreamStream hands the runtime each read of the upstream body as one
// chunk, as it arrives, and keeps a copy for the record.
type upstreamStream struct {
	body io.Reader
	buf  []byte
	t0   time.Time
	now  func() time.Time
	keep *capture
	eof  bool
}

func (u *upstreamStream) Next(ctx context.Context) ([]byte, error) {
	n, err := u.body.Read(u.buf)
	if n > 0 {
		u.keep.add(u.now().Sub(u.t0), u.buf[:n])
	}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		u.eof = true
		err = io.EOF
	case ctx.Err() != nil:
		// Say why: a client gone or a server shutting down.
		err = context.Cause(ctx)
	}
	return u.buf[:n], err
}

// readBody reads a request body whole, at most limit+1 bytes: into one
// slice of the announced length when there is one.
func readBody(r *http.Request, limit int) ([]byte, error) {
	switch n := r.ContentLength; {
	case n == 0:
		return nil, nil
	case n > 0 && n <= int64(limit):
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
}

func (s *Server) proxy(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	reqBody, err := readBody(r, fixture.MaxBody())
	if err != nil {
		http.Error(w, "abctl serve: reading request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(reqBody) > fixture.MaxBody() {
		http.Error(w, "abctl serve: "+(&fixture.TooLargeError{What: "request body", Size: int64(len(reqBody))}).Error(), http.StatusRequestEntityTooLarge)
		return
	}
	target, err := record.Target(s.upstream, r)
	if err != nil {
		http.Error(w, "abctl serve: "+err.Error(), http.StatusBadRequest)
		return
	}
	id := s.ids.Add(1)
	started := s.now()
	path := redact.URL(r.URL.EscapedPath())
	if s.events.active() {
		s.events.publish("exchange_started", startedEvent{ID: id, Started: started.UTC(), Method: r.Method, Path: path})
	}
	// The fixture keeps the request as the client sent it; the chain gets
	// a copy, since it may change the header map it is handed. net/http
	// lets a handler change its request's header: the server read what it
	// needs from it before.
	record.DelHop(r.Header)
	sent := r.Header
	var rec *trace.Recorder
	rec = trace.NewWatchedRecorderWhen(s.events.active, func(e trace.Event) {
		e.Reason, e.Error = capText(e.Reason), capText(e.Error)
		s.events.publish("trace", traceEvent{Exchange: id, Event: e})
	})
	rec.Grow(s.traceRoom)
	limit := s.opts.BodyCap
	if s.opts.RecordDir != "" {
		limit = fixture.MaxBody()
	}
	keep := &capture{limit: limit}
	targetURL := target.String()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	// The parts are the request's as the client sent it (P35); URL is
	// where it goes.
	x := s.chain.NewExchange(pipeline.Request{Request: gateway.Request{Method: r.Method, URL: targetURL, Scheme: scheme, Host: r.Host, Path: r.URL.Path,
		RawQuery: r.URL.RawQuery, RemoteAddr: r.RemoteAddr, Header: sent.Clone()}, Body: reqBody},
		pipeline.ExchangeOptions{Trace: rec, Client: pipeline.HTTPClient{W: w}, MaxBody: fixture.MaxBody()})
	var (
		upStatus   int
		upHeader   http.Header
		upComplete bool
		called     bool
	)
	if x.Request(ctx) {
		called = true
		upStatus, upHeader, upComplete = s.forward(ctx, x, r.Method, target, targetURL, keep, rec)
	}
	res := x.Finish()
	s.finish(ctx, r, id, started, path, targetURL, sent, reqBody, called, upStatus, upHeader, upComplete, keep, rec, res)
	abortIfBroken(res)
}

// abortIfBroken breaks the client's connection (HTTP/1) or resets its
// stream (HTTP/2) when the upstream's body failed after the response
// header went out: what was relayed is flushed, but a clean end would
// tell the client it has the whole answer. The exchange is kept and
// announced first. net/http recovers http.ErrAbortHandler without a log.
func abortIfBroken(res *pipeline.Result) {
	if res.Broken {
		panic(http.ErrAbortHandler)
	}
}

// forward sends the chain's request upstream and runs the response side
// on its answer. It returns the upstream's status and headers and whether
// its body was read to the end.
func (s *Server) forward(ctx context.Context, x *pipeline.Exchange, method string, target *url.URL, targetURL string, keep *capture, rec *trace.Recorder) (int, http.Header, bool) {
	gx := x.Gateway()
	u := target
	if gx.Request.URL != targetURL {
		var err error
		if u, err = url.Parse(gx.Request.URL); err != nil {
			x.Fail(fmt.Errorf("the chain set the request URL to %q: %w", redact.URL(gx.Request.URL), err))
			return 0, nil, false
		}
	}
	out := (&http.Request{Method: method, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: record.StripHop(gx.Request.Header), Host: s.upstream.Host}).WithContext(ctx)
	if body := x.RequestBody(); len(body) > 0 {
		out.ContentLength = int64(len(body))
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := s.transport.RoundTrip(out)
	if err != nil {
		// The wording http.Client gives: method, URL, cause.
		err = &url.Error{Op: method[:1] + strings.ToLower(method[1:]), URL: u.String(), Err: err}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", context.Cause(ctx), err)
		}
		x.Fail(err)
		return 0, nil, false
	}
	defer resp.Body.Close()
	header := resp.Header // ours: stripped in place, a copy for the chain
	record.DelHop(header)
	if n := s.streamRoom.Load(); n > 0 && isEventStream(header) {
		rec.Grow(int(n))
	}
	st := s.streams.Get().(*upstreamStream)
	st.body, st.t0, st.now, st.keep, st.eof = resp.Body, s.now(), s.now, keep, false
	x.Respond(ctx, pipeline.Upstream{Status: resp.StatusCode, Header: header.Clone(), Stream: st})
	eof := st.eof
	st.body, st.keep = nil, nil
	s.streams.Put(st)
	return resp.StatusCode, header, eof
}

// isEventStream reports whether h announces an SSE body; it only sizes
// the trace (the runtime decides how the body is relayed).
func isEventStream(h http.Header) bool {
	ct, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}
