// Package record is a recording reverse proxy: it relays each exchange to
// an upstream, passing every response chunk to the client as it arrives
// (flushing per read), and writes each finished exchange as a redacted
// fixture, atomically. An exchange that does not finish (client gone,
// upstream failed, proxy stopped) is not written, so the output directory
// never holds a partial fixture.
package record

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/replay/fixture"
)

// Proxy is an http.Handler that records exchanges.
type Proxy struct {
	upstream *url.URL
	source   string // the fixtures' source line, redacted once
	out      string
	client   *http.Client
	log      *slog.Logger
	now      func() time.Time
	seq      atomic.Int64
	mu       sync.Mutex
	written  []string
	inflight sync.WaitGroup
	// writeGate, when set, runs before each fixture is written: tests
	// hold writes with it.
	writeGate func()
	// afterRelay, when set, runs after the response is relayed, before
	// the proxy decides whether the exchange completed.
	afterRelay func(*http.Request)

	// memory bounds the body bytes held in memory across exchanges
	// (DefaultMemory); held is the current use, maxHeld the largest seen,
	// spilled counts bodies that went to a temporary file. bigWrite lets
	// one spilled body at a time back into memory.
	memory   int64
	held     atomic.Int64
	maxHeld  atomic.Int64
	spilled  atomic.Int64
	bigWrite chan struct{}
	// The fixture queue (queue.go): finished exchanges wait in queue for
	// one of at most Writers encoders; encoded fixtures wait in linkq for
	// the writer, which writes each to an unnamed file; written files
	// wait in nameq for the namer, which makes them durable with one sync
	// and names them. All are guarded by qmu; qroom signals room in
	// queue, lroom in linkq, nroom in nameq.
	qmu      sync.Mutex
	qroom    *sync.Cond
	lroom    *sync.Cond
	nroom    *sync.Cond
	queueLen int // QueueLen; tests shorten it
	queue    []*job
	encoders int
	linkq    []*encoded
	writing  bool
	nameq    []*encoded
	naming   bool
	// syncs makes the files written in the output directory durable,
	// one sync for every batch written before it; tests count and fail rounds
	// with its sync.
	syncs groupSyncer
	// lost counts the finished exchanges the recorder failed to write
	// (disk full, directory gone): abctl record exits non-zero on them.
	lost atomic.Int64
}

// Writers is how many fixtures a proxy encodes at once. Encoding (redact,
// marshal) costs about half as much CPU as relaying the exchange (50 µs
// for a small one, BenchmarkRecordLoad's profile); one encoder leaves the
// other processors to the exchanges in flight (fifty encoders at once
// took their CPU).
const Writers = 1

// QueueLen is how many finished exchanges wait for their fixture at most.
// Past it, the handler of the next one waits for room before it returns:
// its response is relayed and flushed, but a stream's final chunk and the
// connection's next request wait (the recorder slows down rather than
// drop an exchange or hold unbounded memory).
const QueueLen = 1024

// New returns a proxy to upstream that writes fixtures into dir. A nil
// logger discards messages.
func New(upstream, dir string, log *slog.Logger) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %q: want an http:// or https:// URL with a host", upstream)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Ask for identity bodies so fixtures hold readable text.
	tr.DisableCompression = true
	// Keep a connection per concurrent exchange: the default of two idle
	// connections per host made the proxy dial the upstream afresh for
	// most exchanges at 50-way concurrency (BenchmarkRecordLoad).
	tr.MaxIdleConns = 1024
	tr.MaxIdleConnsPerHost = 1024
	p := &Proxy{upstream: u, out: dir, log: log, now: time.Now, memory: DefaultMemory, bigWrite: make(chan struct{}, 1), queueLen: QueueLen,
		client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	p.source = "abctl record --upstream " + redact.URL(u.String())
	p.qroom = sync.NewCond(&p.qmu)
	p.lroom = sync.NewCond(&p.qmu)
	p.nroom = sync.NewCond(&p.qmu)
	return p, nil
}

// lostOne logs and counts one exchange the recorder failed to write.
func (p *Proxy) lostOne(args ...any) {
	p.lost.Add(1)
	p.log.Error("exchange not recorded", args...)
}

// Lost is how many finished exchanges could not be written (a disk
// error): they were relayed but are not in the output directory.
func (p *Proxy) Lost() int64 { return p.lost.Load() }

// Dir is the output directory.
func (p *Proxy) Dir() string { return p.out }

// Written returns the fixture files written so far.
func (p *Proxy) Written() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.written...)
}

// Wait returns when no exchange is in flight. After the server stopped
// accepting and cut its connections, it makes sure no handler is still
// writing a fixture when the process exits: a cut exchange's handler sees
// its request context end and returns without writing.
func (p *Proxy) Wait() { p.inflight.Wait() }

var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Te", "Trailer", "Upgrade", "Accept-Encoding", "Content-Length"}

// StripHop returns a copy of h without hop-by-hop headers and the ones a
// proxy sets itself (Accept-Encoding, Content-Length): what a recording
// proxy forwards and what a fixture keeps.
func StripHop(h http.Header) http.Header { return stripHop(h) }

// DelHop removes from h, in place, the headers StripHop leaves out: for a
// caller that owns h (a server's request, a client's response).
func DelHop(h http.Header) {
	for _, k := range hopHeaders {
		delete(h, k)
	}
}

func stripHop(h http.Header) http.Header {
	h = h.Clone()
	for _, k := range hopHeaders {
		h.Del(k)
	}
	return h
}

// ServeHTTP relays one exchange and records it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.inflight.Add(1)
	defer p.inflight.Done()
	// The request body is read whole before it is forwarded (a body over
	// the limit is refused, not half sent), into the same memory budget
	// as response bodies: past it, into a temporary file.
	rq := &spool{p: p}
	keep := false // the spools are handed to the fixture writer
	defer func() {
		if !keep {
			rq.close()
		}
	}()
	out, target, ok := p.outbound(w, r, rq)
	if !ok {
		return
	}
	started := p.now()
	// Named at arrival: the per-process sequence number orders fixtures
	// as their requests came, whichever finished first.
	name := p.fileName(r, started)
	resp, err := p.client.Do(out)
	if err != nil {
		p.log.Warn("upstream failed; exchange not recorded", "method", r.Method, "path", redact.URL(r.URL.EscapedPath()), "err", redact.String(err.Error()))
		http.Error(w, "abctl record: upstream: "+redact.String(err.Error()), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	respHeader, streaming, flush := relayHeader(w, resp)
	t0 := p.now()
	sp := &spool{p: p, pooled: true}
	defer func() {
		if !keep {
			sp.close()
		}
	}()
	size, ok := p.relayBody(w, r, resp.Body, sp, t0, flush)
	if !ok {
		return
	}
	if size > fixture.MaxBody() {
		p.log.Warn("exchange not recorded", "path", redact.URL(r.URL.EscapedPath()), "err", (&fixture.TooLargeError{What: "response body", Size: int64(size)}).Error())
		return
	}
	if p.afterRelay != nil {
		p.afterRelay(r)
	}
	// A response of known length whose every byte is written and flushed
	// is complete, whatever the client does next: it may close the
	// connection at once, which cancels r's context (the check alone lost
	// such exchanges without a word). A stream ends with its terminating
	// chunk, written after the handler returns, so a client gone by now
	// left before the end.
	if streaming && r.Context().Err() != nil {
		p.log.Warn("client went away before the end of the stream; exchange not recorded", "path", redact.URL(r.URL.EscapedPath()))
		return
	}
	// The fixture is written after the handler returns, so the client's
	// response ends when the upstream's does, not after the fsync.
	keep = true
	// The forwarded header is what the fixture keeps: net/http's client
	// does not change a request's header, so it is not stripped twice.
	p.enqueue(&job{r: r, reqHeader: out.Header, name: name, target: target, rq: rq, sp: sp, status: resp.StatusCode, respHeader: respHeader, started: started, size: size})
}

// outbound reads the request's body into rq and makes the request to
// the upstream of it; on failure it answers the client and returns false.
func (p *Proxy) outbound(w http.ResponseWriter, r *http.Request, rq *spool) (*http.Request, *url.URL, bool) {
	reqSize, err := rq.readFrom(r.Body, int64(fixture.MaxBody())+1)
	if err != nil {
		http.Error(w, "abctl record: reading request body: "+err.Error(), http.StatusBadRequest)
		return nil, nil, false
	}
	if reqSize > int64(fixture.MaxBody()) {
		http.Error(w, "abctl record: "+(&fixture.TooLargeError{What: "request body", Size: reqSize}).Error(), http.StatusRequestEntityTooLarge)
		return nil, nil, false
	}
	target, err := p.target(r)
	if err != nil {
		http.Error(w, "abctl record: "+err.Error(), http.StatusBadRequest)
		return nil, nil, false
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target.String(), rq.reader())
	if err != nil {
		http.Error(w, "abctl record: "+err.Error(), http.StatusBadGateway)
		return nil, nil, false
	}
	// A spilled body's reader does not tell NewRequest its length: say
	// it, so the upstream gets a Content-Length, not a chunked body.
	out.ContentLength = reqSize
	if reqSize == 0 {
		out.Body = http.NoBody
	}
	out.Header = stripHop(r.Header)
	out.Host = p.upstream.Host
	return out, target, true
}

// relayHeader writes the upstream's status and headers to the client and
// returns the headers, whether the response is a stream, and the flush
// that sends what is written at once.
func relayHeader(w http.ResponseWriter, resp *http.Response) (http.Header, bool, func() error) {
	respHeader := stripHop(resp.Header)
	for k, vs := range respHeader {
		w.Header()[k] = vs
	}
	// A body of known length goes out with its Content-Length, as the
	// upstream sent it (compression is off, so the length is the bytes
	// relayed): the client gets header and body in one write and no
	// chunked terminator. A stream (unknown length, or an event stream)
	// gets its header at once, before the first event.
	streaming := resp.ContentLength < 0 || isEventStream(respHeader)
	if !streaming {
		w.Header().Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	flush := func() error {
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	if streaming {
		_ = flush() // an error shows at the first write
	}
	return respHeader, streaming, flush
}

// relayBody copies the upstream's body to the client, each read relayed
// before it is recorded in sp (up to the size limit), and returns the
// body's size; false when the client went away. An upstream that fails
// mid-body breaks the client's stream too.
func (p *Proxy) relayBody(w http.ResponseWriter, r *http.Request, body io.Reader, sp *spool, t0 time.Time, flush func() error) (int, bool) {
	size := 0
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			// Relay first: the client must not wait for the recording.
			_, werr := w.Write(buf[:n])
			if werr == nil {
				werr = flush()
			}
			if werr != nil {
				p.log.Warn("client went away; exchange not recorded", "path", redact.URL(r.URL.EscapedPath()), "err", werr)
				return 0, false
			}
			size += n
			if size <= fixture.MaxBody() {
				if err := sp.write(p.now().Sub(t0), buf[:n]); err != nil {
					p.lostOne("path", redact.URL(r.URL.EscapedPath()), "err", err)
					size = fixture.MaxBody() + 1 // relay the rest, record nothing
				}
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			p.log.Warn("upstream body failed; exchange not recorded", "path", redact.URL(r.URL.EscapedPath()), "err", redact.String(rerr.Error()))
			// The client gets a broken stream, as the upstream gave it: a
			// clean end would say the answer is whole. net/http closes the
			// connection (HTTP/2: resets the stream) without a log.
			panic(http.ErrAbortHandler)
		}
	}
	return size, true
}

// NewFixture builds the redacted fixture of one finished exchange as a
// recording proxy saw it: the request as the client sent it (to
// targetURL), the upstream's status and headers, and the body as the
// chunks read from the upstream: kept as chunks for a text/event-stream
// response, joined into one body otherwise. Redaction is fixture.Redact's.
func NewFixture(source string, started time.Time, method, targetURL string, reqHeader http.Header, reqBody []byte, status int, respHeader http.Header, chunks []fixture.Chunk) *fixture.Fixture {
	return newFixture(source, started, method, targetURL, reqHeader, reqBody, status, respHeader, chunks, nil)
}

// newFixture is NewFixture given also the response body whole, joined:
// the chunks' data end to end (nil: join them), which is then not copied
// for redaction or as the body.
func newFixture(source string, started time.Time, method, targetURL string, reqHeader http.Header, reqBody []byte, status int, respHeader http.Header, chunks []fixture.Chunk, joined []byte) *fixture.Fixture {
	f := &fixture.Fixture{
		Recorded: started.UTC(),
		Source:   source,
		Request:  fixture.Request{Method: method, URL: targetURL, Header: reqHeader},
		Response: fixture.Response{Status: status, Header: respHeader},
	}
	if len(reqBody) > 0 {
		f.Request.Body = reqBody
	}
	if isEventStream(respHeader) && len(chunks) > 0 {
		f.Response.Chunks = chunks
	} else if joined != nil {
		f.Response.Body = joined
	} else {
		body := []byte{}
		for _, c := range chunks {
			body = append(body, c.Data...)
		}
		f.Response.Body = body
	}
	fixture.RedactJoined(f, joined)
	return f
}

// target is the upstream URL of r: the upstream's base path joined with
// r's path exactly as the client sent it (an escaped slash, %2F, stays
// escaped; url.URL.Path would decode it), and the raw query.
func (p *Proxy) target(r *http.Request) (*url.URL, error) { return Target(p.upstream, r) }

// Target is the upstream URL of r for a proxy to upstream: upstream's base
// path joined with r's path exactly as the client sent it, and the raw
// query.
func Target(upstream *url.URL, r *http.Request) (*url.URL, error) {
	raw := r.URL.EscapedPath()
	if strings.HasPrefix(r.RequestURI, "/") {
		raw, _, _ = strings.Cut(r.RequestURI, "?")
	}
	base := strings.TrimSuffix(upstream.EscapedPath(), "/")
	u, err := url.Parse(upstream.Scheme + "://" + upstream.Host + base + raw)
	if err != nil {
		return nil, fmt.Errorf("request path %q: %v", raw, err)
	}
	u.RawQuery = r.URL.RawQuery
	return u, nil
}

func isEventStream(h http.Header) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(h.Get("Content-Type"))), "text/event-stream")
}

// fileName returns the name maker for one exchange:
// TIME-SEQ-SUFFIX-METHOD-PATH.fixture, where TIME and the per-process SEQ
// order files by arrival and SUFFIX is random, so recorders in different
// processes (or a restart within the same second) never pick the same
// name; fixture.CreateUnique draws another suffix if one is taken anyway.
// METHOD and PATH are sanitised (fixture.NamePart): no request can name a
// file outside the output directory.
func (p *Proxy) fileName(r *http.Request, at time.Time) func(string) string {
	return FileName(at, p.seq.Add(1), r)
}

// FileName is the name maker of the fixture of exchange n of r, which
// arrived at now, as [Proxy] names its files.
func FileName(now time.Time, n int64, r *http.Request) func(string) string {
	// Only the strings are taken here, at arrival; the name is built (and
	// the path redacted) when the fixture is named, off the relay's path.
	method, path := r.Method, r.URL.EscapedPath()
	var prefix, rest string
	return func(suffix string) string {
		if prefix == "" {
			prefix = fmt.Sprintf("%s-%04d-", now.UTC().Format("20060102T150405"), n)
			// The path as sent, with token-shaped segments redacted (a
			// bot token in the path must not reach a file name).
			slug := fixture.NamePart(strings.Trim(redact.URL(path), "/"), "root")
			rest = "-" + strings.ToLower(fixture.NamePart(method, "request")) + "-" + slug + fixture.Ext
		}
		return prefix + suffix + rest
	}
}

// Durable makes fixtures' temporary files durable in groups, for another
// writer of fixtures (abctl serve) that writes as the recorder does:
// fixture.WriteTemp with SyncEach(), then Wait, then fixture.LinkUnique.
// The zero Durable is ready to use.
type Durable struct{ g groupSyncer }

// Wait returns once a sync of dir's file system that started after the
// call has finished, with its error.
func (d *Durable) Wait(dir string) error { return d.g.wait(dir) }

// SyncEach reports whether each temporary file must be synced as it is
// written, where the file system cannot be synced as a whole.
func SyncEach() bool { return !groupSync }

// groupSyncer is a group commit: every writer whose temporary file is
// written waits for a sync of the file system that starts after it
// asked, and one sync serves every writer waiting for it. Fifty fixtures
// finishing together cost one or two syncs rather than fifty fsyncs,
// which took more CPU than relaying the exchanges (BenchmarkRecordLoad).
type groupSyncer struct {
	mu       sync.Mutex
	cond     *sync.Cond
	running  bool
	started  uint64 // rounds started
	finished uint64 // rounds finished
	err      error  // of the last round
	// sync syncs dir's file system; nil means syncFS (tests count rounds).
	sync func(dir string) error
}

// wait returns once a sync of dir's file system that started after the
// call has finished, with its error.
func (g *groupSyncer) wait(dir string) error {
	if !groupSync && g.sync == nil {
		return nil // each temporary file was synced as written
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	need := g.started + 1
	for g.finished < need {
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		g.started++
		round := g.started
		g.mu.Unlock()
		fn := g.sync
		if fn == nil {
			fn = syncFS
		}
		err := fn(dir)
		g.mu.Lock()
		g.running = false
		g.finished, g.err = round, err
		g.cond.Broadcast()
	}
	return g.err
}
