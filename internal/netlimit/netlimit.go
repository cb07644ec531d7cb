// Package netlimit bounds what the clients of abctl serve and abctl record
// can hold on the server: how long a request's header and body may take
// to arrive, how long an idle keep-alive connection stays open, how long
// a write to a client that reads nothing may block, and how many
// connections are open at once. Without these bounds idle keep-alive
// connections use up the file descriptors (new clients then time out)
// and a client that sends its body byte by byte, or never reads its
// answer, holds a goroutine and a descriptor for ever. docs/limits.md
// lists the bounds with their flags.
package netlimit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Limits.
const (
	DefaultReadHeader = 10 * time.Second
	DefaultReadBody   = 60 * time.Second
	DefaultIdle       = 60 * time.Second
	DefaultWrite      = 30 * time.Second
)

// Limits are the server bounds. A zero field takes its default; a
// negative duration turns that bound off.
type Limits struct {
	// ReadHeader is how long a request's header may take to arrive.
	ReadHeader time.Duration
	// ReadBody is how long a request's body may take to arrive, counted
	// from when its handler starts.
	ReadBody time.Duration
	// Idle is how long a keep-alive connection may wait for its next
	// request.
	Idle time.Duration
	// Write is how long one write to a client may block: a client that
	// takes no byte of a writeChunk for that long is cut. It is a
	// progress bound, not a bound on the whole answer, so a stream that
	// lasts for hours is never cut while its client reads.
	Write time.Duration
	// MaxConns is how many client connections may be open at once
	// (DefaultMaxConns); a connection past it is answered 503 and closed.
	MaxConns int
}

// writeChunk is the most written under one write deadline: a large body
// to a slow client is written piece by piece, each with a fresh deadline.
const writeChunk = 64 << 10

func pick(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// WithDefaults returns l with each zero field set to its default.
func (l Limits) WithDefaults() Limits {
	l.ReadHeader = pick(l.ReadHeader, DefaultReadHeader)
	l.ReadBody = pick(l.ReadBody, DefaultReadBody)
	l.Idle = pick(l.Idle, DefaultIdle)
	l.Write = pick(l.Write, DefaultWrite)
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns()
	}
	return l
}

// DefaultMaxConns is the connection bound when none is given: half the
// file descriptors the process may open, less a reserve for the files,
// plugins and listeners (each proxied exchange also holds a connection
// to the upstream), between 32 and 10,000.
func DefaultMaxConns() int {
	n := (openFiles() - 512) / 2
	return min(max(n, 32), 10_000)
}

// Server returns an http.Server for h with the bounds of l (after
// WithDefaults): header and idle timeouts, and h wrapped so that each
// request's body has ReadBody to arrive and each write Write to drain.
// Serve it on Listener(ln).
func (l Limits) Server(h http.Handler) *http.Server {
	l = l.WithDefaults()
	return &http.Server{Handler: &guard{h: h, l: l}, ReadHeaderTimeout: l.ReadHeader, IdleTimeout: l.Idle}
}

// Listener returns ln bounded to l.MaxConns open connections (after
// WithDefaults). A connection past the bound is answered "503 Service
// Unavailable" and closed at once, so it costs a descriptor for no
// longer than that, and the client learns why rather than timing out.
func (l Limits) Listener(ln net.Listener) net.Listener {
	l = l.WithDefaults()
	return &listener{Listener: ln, max: int64(l.MaxConns)}
}

// ErrBodyTimeout is the error reading a request body that did not arrive
// within Limits.ReadBody.
var ErrBodyTimeout = errors.New("the request body did not arrive in time")

// guard sets the per-request deadlines.
type guard struct {
	h http.Handler
	l Limits
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	if g.l.ReadBody > 0 && r.Body != nil && r.Body != http.NoBody {
		if err := rc.SetReadDeadline(time.Now().Add(g.l.ReadBody)); err == nil {
			b := &body{ReadCloser: r.Body, rc: rc, left: r.ContentLength, d: g.l.ReadBody}
			// An early return leaves the deadline on the connection; the
			// server sets its own before the next request.
			r.Body = b
		}
	}
	if g.l.Write > 0 {
		w = &writer{ResponseWriter: w, rc: rc, d: g.l.Write}
	}
	g.h.ServeHTTP(w, r)
}

// body clears the read deadline once the whole body is read: the server
// reads the connection in the background after that (to see a client
// go), and a deadline left there would end a long answer's context. A
// failed read keeps it, so the server's own read of the rest fails too
// and the connection closes.
type body struct {
	io.ReadCloser
	rc      *http.ResponseController
	left    int64 // bytes still announced; -1 unknown
	d       time.Duration
	cleared bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	if !b.cleared && (err == io.EOF || (err == nil && b.left == 0)) {
		b.cleared = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		err = fmt.Errorf("%w: it took longer than %s (--read-body-timeout): %w", ErrBodyTimeout, b.d, err)
	}
	return n, err
}

// writer gives each write, and each flush, a fresh write deadline. Most
// writes of a stream only fill net/http's buffer, and setting a deadline
// (a clock read and a timer change on the connection) cost as much as the
// write itself, so the deadline is moved only once a part of the bound
// has passed since it was last set: each write still has between
// (rearmParts-1)/rearmParts of the bound and the whole bound to drain.
type writer struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
	// armed is when the deadline was last set to armed+d (zero: never).
	armed time.Time
}

// rearmParts: the deadline is moved after d/rearmParts has passed.
const rearmParts = 32

// arm makes sure the connection's write deadline is at least
// d - d/rearmParts away.
func (w *writer) arm() {
	// time.Since of a monotonic reading reads one clock; time.Now reads
	// two, and this runs on every write of a stream.
	if !w.armed.IsZero() && time.Since(w.armed) < w.d/rearmParts {
		return
	}
	now := time.Now()
	if w.rc.SetWriteDeadline(now.Add(w.d)) == nil {
		w.armed = now
	}
}

func (w *writer) Write(p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		k := min(len(p), writeChunk)
		w.arm()
		n, err := w.ResponseWriter.Write(p[:k])
		done += n
		if err != nil {
			return done, err
		}
		p = p[k:]
	}
	return done, nil
}

func (w *writer) Flush() {
	w.arm()
	_ = w.rc.Flush()
}

// FlushError is Flush with its error, which http.ResponseController uses.
func (w *writer) FlushError() error {
	w.arm()
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the server's writer (the
// event stream sets its own deadlines).
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// listener counts open connections.
type listener struct {
	net.Listener
	max  int64
	open atomic.Int64
}

// busy is the whole answer to a connection past the bound. A new
// connection's send buffer is empty, so writing it never blocks.
const busy = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 76\r\n\r\ntoo many open connections (--max-conns); retry, or raise the bound on serve\n"

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, busy)
			_ = c.Close()
			continue
		}
		return &conn{Conn: c, l: l}, nil
	}
}

type conn struct {
	net.Conn
	l    *listener
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// openFiles is the process's soft limit on open files (Go raises it to
// the hard limit at start), or 4,096 when it cannot be read.
func openFiles() int {
	if n, ok := rlimitNoFile(); ok && n > 0 {
		return int(min(n, 1<<30))
	}
	return 4096
}

// SetWriteTimeout changes the write bound of w, a response writer of a
// Limits server, for the rest of its response (the event stream cuts a
// stalled subscriber sooner than an answer's client). It reports whether
// w is such a writer.
func SetWriteTimeout(w http.ResponseWriter, d time.Duration) bool {
	if lw, ok := w.(*writer); ok && d > 0 {
		lw.d, lw.armed = d, time.Time{} // the next write sets the new bound
		return true
	}
	return false
}
