package runtimekit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/chunks"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// Upstream is the scripted upstream of one exchange, as the runtime's
// upstream call would answer.
type Upstream struct {
	// Err, when set, is the upstream not answering at all; nothing else is.
	Err    error
	Status int
	// Header is never nil.
	Header http.Header
	// Body is the response in one piece; nil when Stream is set.
	Body []byte
	// Stream is a streamed (chunked) response; nil for a body in one piece.
	Stream *Stream
}

// ErrEarlyEnd is the error a scripted stream's read fails with when the
// stream ends early (UpstreamSpec.early_end).
var ErrEarlyEnd = errors.New("upstream stream broke (scripted early end)")

// NewUpstream plays u.
func NewUpstream(u *abkitv1.UpstreamSpec) Upstream {
	up := Upstream{Status: int(u.GetStatus()), Header: abkitv1.HeaderFromProto(u.GetHeader()), Body: u.GetBody()}
	if up.Header == nil {
		up.Header = http.Header{}
	}
	switch {
	case u.GetError() != "":
		return Upstream{Err: errors.New(u.GetError()), Header: http.Header{}}
	case len(u.GetChunks()) > 0 || u.GetEarlyEnd():
		up.Body = nil
		up.Stream = newStream(u.GetChunks(), u.GetEarlyEnd())
	}
	return up
}

// ServeHTTP plays the upstream over HTTP, for a runtime that proxies to a
// URL (serve it with net/http/httptest): the status, the headers, the body
// or each chunk flushed in turn. An early end aborts the response after the
// chunks, and an upstream error aborts it before anything is written
// (http.ErrAbortHandler), so the proxy sees a broken connection.
func (u Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u.Err != nil {
		panic(http.ErrAbortHandler)
	}
	for k, v := range u.Header {
		w.Header()[k] = slices.Clone(v)
	}
	w.WriteHeader(u.Status)
	if u.Stream == nil {
		_, _ = w.Write(u.Body)
		return
	}
	f, _ := w.(http.Flusher)
	for {
		b, err := u.Stream.Next(r.Context())
		if err == io.EOF {
			return
		}
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		_, _ = w.Write(b)
		if f != nil {
			f.Flush()
		}
	}
}

// Stream replays a streamed upstream's chunks.
type Stream struct{ s *chunks.Stream }

// newStream is a stream of chunks that ends with ErrEarlyEnd when early.
func newStream(cs [][]byte, early bool) *Stream {
	s := chunks.New(cs)
	if early {
		s.End = ErrEarlyEnd
	}
	return &Stream{s: s}
}

// Next returns the next chunk; io.EOF at the end, [ErrEarlyEnd] after the
// chunks of a stream that ends early. Like a real upstream body read, it
// fails with ctx's error once ctx is done (the client went away).
func (s *Stream) Next(ctx context.Context) ([]byte, error) { return s.s.Next(ctx) }

// Reader returns the stream as an io.Reader reading under ctx; each Read
// returns at most one chunk.
func (s *Stream) Reader(ctx context.Context) io.Reader { return &streamReader{s: s, ctx: ctx} }

type streamReader struct {
	s    *Stream
	ctx  context.Context
	rest []byte
}

func (r *streamReader) Read(p []byte) (int, error) {
	for len(r.rest) == 0 {
		b, err := r.s.Next(r.ctx)
		if err != nil {
			return 0, err
		}
		r.rest = b
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

type clientKey struct{}

// Client plays the client of one exchange: it records what the client got
// (an http.ResponseWriter and http.Flusher, for a runtime that writes to
// one) and owns the request context, which it cancels when the client
// goes away.
type Client struct {
	Status int
	header http.Header
	Body   bytes.Buffer
	cancel context.CancelFunc
}

// NewClient returns the client of exchange es and the request context to
// run the exchange under: a child of ctx, already cancelled when the
// scenario's client is gone before it starts (es.cancelled), and cancelled
// by [Reply.Act] when a probe scripts a client cancellation. Call
// Client.Cancel when the exchange is over.
func NewClient(ctx context.Context, es *abkitv1.ExchangeSpec) (*Client, context.Context) {
	c := &Client{header: http.Header{}}
	rctx, cancel := context.WithCancel(ctx)
	c.cancel = cancel
	if es.GetCancelled() {
		cancel()
	}
	return c, context.WithValue(rctx, clientKey{}, c)
}

// Cancel makes the client go away: the request context is cancelled.
func (c *Client) Cancel() { c.cancel() }

// Header returns the response headers the client got.
func (c *Client) Header() http.Header { return c.header }

// WriteHeader records the status; the first one counts.
func (c *Client) WriteHeader(status int) {
	if c.Status == 0 {
		c.Status = status
	}
}

// Write appends to the body the client got (status 200 if none was set).
func (c *Client) Write(b []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	return c.Body.Write(b)
}

// Flush does nothing: everything written is already the client's.
func (c *Client) Flush() {}

// Fill sets what the client got in run: status and body.
func (c *Client) Fill(run *abkitv1.ExchangeRun) {
	run.Status = int32(c.Status)
	run.Body = bytes.Clone(c.Body.Bytes())
	run.Header = abkitv1.HeaderToProto(c.header)
}

// Chain is a built pipeline as [PipelineScenario.Run] drives it. Nil
// lifecycle functions are calls the runtime does not have (they succeed).
type Chain struct {
	Start, Ready, Stop func(ctx context.Context) error
	// Exchange runs exchange idx of the scenario; see [NewClient] and
	// [NewUpstream] for its two ends.
	Exchange func(ctx context.Context, idx uint32, es *abkitv1.ExchangeSpec) *abkitv1.ExchangeRun
}

// Run drives a built chain through the scenario: Start when asked (a
// failed Start runs no exchange), the Ready calls concurrently, every
// exchange in order, Stop under the scenario's stop deadline; and returns
// the run with each call's error. Build errors are the adapter's to
// report before (see [BuildError]).
func (sc PipelineScenario) Run(ctx context.Context, c Chain) *abkitv1.PipelineRun {
	run := &abkitv1.PipelineRun{}
	call := func(f func(context.Context) error, ctx context.Context) string {
		if f == nil {
			return ""
		}
		if err := f(ctx); err != nil {
			return err.Error()
		}
		return ""
	}
	if sc.GetStart() {
		run.StartError = call(c.Start, ctx)
	}
	if n := int(sc.GetReadyCalls()); n > 0 {
		run.ReadyErrors = make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { run.ReadyErrors[i] = call(c.Ready, ctx) })
		}
		wg.Wait()
	}
	if run.StartError == "" && c.Exchange != nil {
		for i, es := range sc.GetExchanges() {
			run.Exchanges = append(run.Exchanges, c.Exchange(ctx, uint32(i), es))
		}
	}
	if sc.GetStop() {
		sctx := ctx
		if n := sc.GetStopTimeoutNs(); n > 0 {
			c, cancel := context.WithTimeout(ctx, time.Duration(n))
			defer cancel()
			sctx = c
		}
		run.StopError = call(c.Stop, sctx)
	}
	return run
}

// Plugin returns the registered probe plugin named name, nil if none.
func (sc PipelineScenario) Plugin(name string) *abkitv1.ProbeSpec {
	for _, p := range sc.GetPlugins() {
		if p.GetName() == name {
			return p
		}
	}
	return nil
}

// Entry is one chain entry of a scenario, checked by
// [PipelineScenario.Entries].
type Entry struct {
	*abkitv1.PipelineEntry
	// Plugin is the entry's probe spec; an empty spec when the entry names
	// no plugin at all, which the runtime reports itself (P1).
	Plugin *abkitv1.ProbeSpec
	// Observe is on_error observe: the plugin's failures are only recorded.
	Observe bool
}

// Entries checks what the contract refuses of a chain before any plugin
// is built, whatever the runtime (P6, P10): a mode other than proxy or
// waypoint, an on_error other than enforce, observe or off, an entry
// naming no plugin of the scenario, a configuration block for a plugin
// that takes none. It returns those errors and the entries left to build
// in order, without the ones turned off and the ones naming an unknown
// plugin. The checks a runtime makes itself (names, requires, writers)
// are its own to report.
func (sc PipelineScenario) Entries() ([]Entry, []*abkitv1.BuildError) {
	var out []Entry
	var errs []*abkitv1.BuildError
	if m := sc.GetMode(); m != "" && m != "proxy" && m != "waypoint" {
		errs = append(errs, BuildError("P10", "", "unknown mode "+m+"; want proxy or waypoint"))
	}
	for _, e := range sc.GetEntries() {
		ps, oe := sc.Plugin(e.GetPlugin()), e.GetOnError()
		switch {
		case oe == "off":
			continue
		case oe != "" && oe != "enforce" && oe != "observe":
			errs = append(errs, BuildError("P6", e.GetPlugin(), "unknown on_error "+oe+"; want enforce, observe or off"))
		case ps == nil && e.GetPlugin() != "":
			errs = append(errs, BuildError("P6", e.GetPlugin(), "no plugin of that name"))
			continue
		case ps != nil && len(ps.GetConfigSchemaJson()) == 0 && HasConfig(e):
			errs = append(errs, BuildError("P6", e.GetPlugin(), "config given to a plugin that takes none"))
		}
		if ps == nil {
			ps = &abkitv1.ProbeSpec{}
		}
		out = append(out, Entry{PipelineEntry: e, Plugin: ps, Observe: oe == "observe"})
	}
	return out, errs
}

// Has reports whether the probe declares behaviour b (finish, init, ready,
// shutdown, stream). The lifecycle behaviours come as a group: a probe
// with any of init, shutdown and ready has all three.
func Has(ps *abkitv1.ProbeSpec, b string) bool {
	bs := ps.GetBehaviours()
	if b == "init" || b == "shutdown" || b == "ready" {
		return slices.Contains(bs, "init") || slices.Contains(bs, "shutdown") || slices.Contains(bs, "ready")
	}
	return slices.Contains(bs, b)
}

// Outcome is an exchange's outcome as the run reports it: kind "allow",
// "deny" or "error"; the status the client got; the plugin that denied;
// the reason (empty if the runtime has none, P29.outcome=no-reason).
func Outcome(kind string, status int, deniedBy, reason string, d time.Duration) *abkitv1.Outcome {
	return &abkitv1.Outcome{Kind: kind, Status: int32(status), DeniedBy: deniedBy, Reason: reason, DurationNs: int64(d)}
}

// BuildError is one build error: the rule it breaks when the runtime
// knows it (P1, P6–P10; may be empty), the chain entry's plugin, the text.
func BuildError(rule, plugin, message string) *abkitv1.BuildError {
	return &abkitv1.BuildError{Rule: rule, Plugin: plugin, Message: message}
}

// Warning is one warning the runtime emitted during an exchange.
func Warning(rule, plugin, message string) *abkitv1.RuntimeWarning {
	return &abkitv1.RuntimeWarning{Rule: rule, Plugin: plugin, Message: message}
}

// HasConfig reports whether chain entry e gives a configuration block: an
// absent, empty, `null` or `{}` block is none (P6).
func HasConfig(e *abkitv1.PipelineEntry) bool {
	b := bytes.TrimSpace(e.GetConfigJson())
	return len(b) != 0 && string(b) != "null" && string(b) != "{}"
}

// Errors returns the errors joined in err (errors.Join, or any error with
// Unwrap() []error), err alone if it joins none, nil for nil: a runtime's
// build errors one by one, to report each.
func Errors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// RequestBody is the body of the client's request: nil when it has none
// (has_body false), non-nil (maybe empty) when it has one.
func RequestBody(rq *abkitv1.HTTPRequest) []byte {
	if !rq.GetHasBody() {
		return nil
	}
	if b := rq.GetBody(); b != nil {
		return b
	}
	return []byte{}
}
