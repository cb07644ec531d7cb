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
	"os"
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
	// writers bounds the fixtures written at once. Writing (redact,
	// encode, create, fsync, link) costs about as much CPU as relaying the
	// exchange; fifty writers at once took that CPU from the exchanges in
	// flight. The rest wait their turn, parked, after their client has
	// its response; their bodies stay within the memory budget.
	writers chan struct{}
	// durable makes written temporary files durable in groups.
	durable groupSyncer
}

// Writers is how many fixtures a proxy writes at once.
const Writers = 2

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
	return &Proxy{upstream: u, out: dir, log: log, now: time.Now, memory: DefaultMemory, bigWrite: make(chan struct{}, 1), writers: make(chan struct{}, Writers),
		client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

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
	reqSize, err := rq.readFrom(r.Body, int64(fixture.MaxBody())+1)
	if err != nil {
		http.Error(w, "abctl record: reading request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if reqSize > int64(fixture.MaxBody()) {
		http.Error(w, "abctl record: "+(&fixture.TooLargeError{What: "request body", Size: reqSize}).Error(), http.StatusRequestEntityTooLarge)
		return
	}
	target, err := p.target(r)
	if err != nil {
		http.Error(w, "abctl record: "+err.Error(), http.StatusBadRequest)
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target.String(), rq.reader())
	if err != nil {
		http.Error(w, "abctl record: "+err.Error(), http.StatusBadGateway)
		return
	}
	// A spilled body's reader does not tell NewRequest its length: say
	// it, so the upstream gets a Content-Length, not a chunked body.
	out.ContentLength = reqSize
	if reqSize == 0 {
		out.Body = http.NoBody
	}
	out.Header = stripHop(r.Header)
	out.Host = p.upstream.Host
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
	t0 := p.now()
	sp := &spool{p: p}
	defer func() {
		if !keep {
			sp.close()
		}
	}()
	size := 0
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			// Relay first: the client must not wait for the recording.
			_, werr := w.Write(buf[:n])
			if werr == nil {
				werr = flush()
			}
			if werr != nil {
				p.log.Warn("client went away; exchange not recorded", "path", redact.URL(r.URL.EscapedPath()), "err", werr)
				return
			}
			size += n
			if size <= fixture.MaxBody() {
				if err := sp.write(p.now().Sub(t0), buf[:n]); err != nil {
					p.log.Warn("exchange not recorded", "path", redact.URL(r.URL.EscapedPath()), "err", err)
					size = fixture.MaxBody() + 1 // relay the rest, record nothing
				}
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			p.log.Warn("upstream body failed; exchange not recorded", "path", redact.URL(r.URL.EscapedPath()), "err", redact.String(rerr.Error()))
			return
		}
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
	p.inflight.Add(1)
	keep = true
	go func() {
		defer p.inflight.Done()
		defer sp.close()
		defer rq.close()
		p.writers <- struct{}{}
		var once sync.Once
		release := func() { once.Do(func() { <-p.writers }) }
		defer release()
		if rq.file != nil || sp.file != nil || rq.n+sp.n > bigExchange {
			// A spilled or large body comes back into memory to be
			// encoded (which costs a few times its size): one at a time,
			// so large exchanges cost one encoding, not all.
			p.bigWrite <- struct{}{}
			defer func() { <-p.bigWrite }()
		}
		chunks, err := sp.fixtureChunks()
		if err != nil {
			p.log.Error("exchange not recorded", "err", err)
			return
		}
		reqBody, err := rq.bytes()
		if err != nil {
			p.log.Error("exchange not recorded", "err", err)
			return
		}
		p.write(release, r, name, target, reqBody, resp.StatusCode, respHeader, chunks, started, size)
	}()
}

// NewFixture builds the redacted fixture of one finished exchange as a
// recording proxy saw it: the request as the client sent it (to
// targetURL), the upstream's status and headers, and the body as the
// chunks read from the upstream: kept as chunks for a text/event-stream
// response, joined into one body otherwise. Redaction is fixture.Redact's.
func NewFixture(source string, started time.Time, method, targetURL string, reqHeader http.Header, reqBody []byte, status int, respHeader http.Header, chunks []fixture.Chunk) *fixture.Fixture {
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
	} else {
		body := []byte{}
		for _, c := range chunks {
			body = append(body, c.Data...)
		}
		f.Response.Body = body
	}
	fixture.Redact(f)
	return f
}

// write records one finished exchange.
//
// It is called holding a writer slot and calls release once the fixture's
// temporary file is written; the sync and the link come after. The
// temporary file is on disk before it gets its name, so a crash never
// leaves a fixture with missing data.
func (p *Proxy) write(release func(), r *http.Request, name func(string) string, target *url.URL, reqBody []byte, status int, respHeader http.Header, chunks []fixture.Chunk, started time.Time, size int) {
	defer release()
	if p.writeGate != nil {
		p.writeGate()
	}
	f := NewFixture("abctl record --upstream "+redact.URL(p.upstream.String()), started, r.Method, target.String(), stripHop(r.Header), reqBody, status, respHeader, chunks)
	data, err := fixture.Marshal(f)
	if err != nil {
		p.log.Error("exchange not recorded", "err", err)
		return
	}
	tmp, err := fixture.WriteTemp(p.out, data, !groupSync)
	if err != nil {
		p.log.Error("exchange not recorded", "err", err)
		return
	}
	// The CPU-heavy part is done: let the next exchange in while this
	// one waits for its data to be on disk.
	release()
	if err := p.durable.wait(p.out); err != nil {
		os.Remove(tmp)
		p.log.Error("exchange not recorded", "err", fmt.Errorf("sync %s: %w", p.out, err))
		return
	}
	file, err := fixture.LinkUnique(p.out, tmp, name)
	if err != nil {
		p.log.Error("exchange not recorded", "err", err)
		return
	}
	p.mu.Lock()
	p.written = append(p.written, file)
	p.mu.Unlock()
	p.log.Info("recorded", "file", file, "status", status, "bytes", size)
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
	stamp := now.UTC().Format("20060102T150405")
	method := strings.ToLower(fixture.NamePart(r.Method, "request"))
	// The path as sent, with token-shaped segments redacted (a bot token
	// in the path must not reach a file name).
	slug := fixture.NamePart(strings.Trim(redact.URL(r.URL.EscapedPath()), "/"), "root")
	return func(suffix string) string {
		return fmt.Sprintf("%s-%04d-%s-%s-%s%s", stamp, n, suffix, method, slug, fixture.Ext)
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
