// Package replay runs recorded exchanges (internal/replay/fixture) through
// a plugin chain on the reference runtime (internal/pipeline) and compares
// the traces with golden files: the engine of abctl dryrun and abctl
// replay. See docs/replay.md.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"unsafe"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/chunks"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// Report is what one exchange did: the trace, the outcome and the
// warnings. Its JSON form is the dry-run output and the golden file format
// (docs/replay.md); events keep the docs/trace.md field names.
type Report struct {
	Events   []trace.Event `json:"events"`
	Outcome  Outcome       `json:"outcome"`
	Warnings []string      `json:"warnings,omitempty"`
}

// Outcome is how the exchange ended and what the client got.
type Outcome struct {
	// Kind is allow, deny or error.
	Kind     string `json:"kind"`
	Status   int    `json:"status"`
	DeniedBy string `json:"denied_by,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Streamed reports whether the response was relayed frame by frame;
	// Frames counts the frames dispatched and Relayed the body bytes the
	// client got.
	Streamed bool  `json:"streamed"`
	Frames   int   `json:"frames"`
	Relayed  int64 `json:"relayed_bytes"`
}

// MarshalIndent is the canonical golden form: one event per line, so a
// golden diff shows exactly the calls that changed, and a newline at the
// end.
func (r Report) MarshalIndent() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(64 + 160*len(r.Events))
	if err := r.WriteIndent(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteIndent writes the canonical golden form of [Report.MarshalIndent]
// to w. One encoder and one line buffer serve every event, so writing a
// report allocates little beyond what w keeps.
func (r Report) WriteIndent(w io.Writer) error {
	rw := NewReportWriter(w)
	for i := range r.Events {
		if err := rw.Event(&r.Events[i]); err != nil {
			return err
		}
	}
	return rw.Finish(r.Outcome, r.Warnings)
}

// ReportWriter writes a report in its canonical golden form event by
// event, as a run produces them, so that a trace need not be held: the
// events array is open until Finish writes the outcome and the warnings.
type ReportWriter struct {
	w    io.Writer
	line bytes.Buffer
	enc  *json.Encoder
	ev   []byte // an event's line, reused
	n    int
	err  error
	// forms are the encodings of the frame events seen, but for their
	// numbers (see frameForm); a replay worker's writers share them.
	forms *[]frameForm
	hint  int // the form found last
}

// NewReportWriter starts a report on w.
func NewReportWriter(w io.Writer) *ReportWriter {
	rw := &ReportWriter{w: w}
	rw.enc = json.NewEncoder(&rw.line) // escapes HTML, as json.Marshal does
	return rw
}

// put writes v's JSON after prefix, without the encoder's trailing newline.
func (rw *ReportWriter) put(prefix string, v any) error {
	if rw.err != nil {
		return rw.err
	}
	rw.line.Reset()
	rw.line.WriteString(prefix)
	if err := rw.enc.Encode(v); err != nil {
		rw.err = err
		return err
	}
	_, rw.err = rw.w.Write(rw.line.Bytes()[:rw.line.Len()-1])
	return rw.err
}

// Event writes the next event.
func (rw *ReportWriter) Event(e *trace.Event) error {
	prefix := ",\n    "
	if rw.n == 0 {
		prefix = "{\n  \"events\": [\n    "
	}
	rw.n++
	if rw.err != nil {
		return rw.err
	}
	rw.ev = append(rw.ev[:0], prefix...)
	if f := rw.form(e); f != nil {
		// A frame event like one seen before: only its numbers differ.
		rw.ev = append(rw.ev, `{"seq":`...)
		rw.ev = strconv.AppendInt(rw.ev, int64(e.Seq), 10)
		rw.ev = append(rw.ev, f.head...)
		rw.ev = strconv.AppendInt(rw.ev, int64(*e.Frame), 10)
		rw.ev = append(rw.ev, f.tail...)
	} else {
		// trace.Event.AppendJSON writes what the encoder would, without
		// reflection: this runs once per event of every golden
		// comparison.
		rw.ev = e.AppendJSON(rw.ev)
	}
	_, rw.err = rw.w.Write(rw.ev)
	return rw.err
}

// frameKey is every field of a trace event but Seq and Frame, for the
// events a frameForm holds (no headers, rejection or extensions): two with
// the same key encode alike but for those two numbers.
// TestFrameKeyCoversEvent fails when trace.Event gains a field.
type frameKey struct {
	family                  trace.Family
	direction, hook, plugin string
	last                    bool
	action, reason          string
	status                  int
	mutated                 string
	shadow                  bool
	err, phase              string
	durationNS              int64
}

// equal is k == o, with each string compared by its pointer first: an
// event's strings are nearly always the very ones of the last like it
// (the plugin's name, the hook and action constants), and == called the
// runtime's comparison for each.
func (k *frameKey) equal(o *frameKey) bool {
	return k.last == o.last && k.status == o.status && k.shadow == o.shadow && k.durationNS == o.durationNS &&
		sameString(string(k.family), string(o.family)) && sameString(k.direction, o.direction) &&
		sameString(k.hook, o.hook) && sameString(k.plugin, o.plugin) && sameString(k.action, o.action) &&
		sameString(k.reason, o.reason) && sameString(k.mutated, o.mutated) && sameString(k.err, o.err) &&
		sameString(k.phase, o.phase)
}

// sameString is a == b, without a call when both are the same bytes.
func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// frameForm is the encoding of a frame event around its numbers:
// {"seq":SEQ head FRAME tail. A golden holds one frame event per streaming
// plugin and frame, nearly all alike (the same plugin continuing), so they
// are encoded once per writer's worker instead of once each.
type frameForm struct {
	key        frameKey
	head, tail []byte
}

// maxForms bounds the forms kept: about two per streaming plugin.
const maxForms = 16

// form returns the frameForm of e, making it if there is room; nil for an
// event that is not a frame event of the cacheable kind, or timed (a
// duration differs every time).
func (rw *ReportWriter) form(e *trace.Event) *frameForm {
	if rw.forms == nil || e.Frame == nil || e.DurationNS != 0 || len(e.Headers) > 0 || e.Rejection != nil || len(e.Extensions) > 0 {
		return nil
	}
	k := frameKey{e.Family, e.Direction, e.Hook, e.Plugin, e.Last, e.Action, e.Reason, e.Status, e.Mutated, e.Shadow, e.Error, e.Phase, e.DurationNS}
	forms := *rw.forms
	// Frame events come round the streaming plugins in turn: the form
	// after the last one found is nearly always the one.
	for j := range forms {
		i := (rw.hint + 1 + j) % len(forms)
		if forms[i].key.equal(&k) {
			rw.hint = i
			return &forms[i]
		}
	}
	if len(forms) >= maxForms {
		return nil
	}
	z := *e
	z.Seq, z.Frame = 0, new(int)
	enc := z.AppendJSON(nil)
	const seq0, frame0 = `{"seq":0`, `,"frame":0`
	// Strings before the frame are quoted with their quotes escaped, so
	// the first ,"frame": is the member's.
	i := bytes.Index(enc, []byte(frame0))
	if !bytes.HasPrefix(enc, []byte(seq0)) || i < 0 {
		return nil
	}
	*rw.forms = append(forms, frameForm{key: k, head: enc[len(seq0) : i+len(frame0)-1], tail: enc[i+len(frame0):]})
	rw.hint = len(forms)
	return &(*rw.forms)[len(forms)]
}

// Finish closes the events array and writes the outcome and warnings.
func (rw *ReportWriter) Finish(o Outcome, warnings []string) error {
	tail := "\n  ],\n  \"outcome\": "
	if rw.n == 0 {
		tail = "{\n  \"events\": [],\n  \"outcome\": "
	}
	if err := rw.put(tail, o); err != nil {
		return err
	}
	if len(warnings) > 0 {
		prefix := ",\n  \"warnings\": [\n    "
		for _, wn := range warnings {
			if err := rw.put(prefix, wn); err != nil {
				return err
			}
			prefix = ",\n    "
		}
		if _, rw.err = io.WriteString(rw.w, "\n  ]"); rw.err != nil {
			return rw.err
		}
	}
	_, rw.err = io.WriteString(rw.w, "\n}\n")
	return rw.err
}

// matchWriter compares what is written to it with want, without keeping
// it: the golden fast path costs no buffer for the encoded report.
type matchWriter struct {
	want []byte
	off  int
	diff bool
}

func (m *matchWriter) Write(p []byte) (int, error) {
	if !m.diff {
		if len(p) > len(m.want)-m.off || !bytes.Equal(p, m.want[m.off:m.off+len(p)]) {
			m.diff = true
		}
		m.off += len(p)
	}
	return len(p), nil
}

// EncodesTo reports whether r's canonical golden form is exactly golden.
func (r Report) EncodesTo(golden []byte) bool {
	m := &matchWriter{want: golden}
	return r.WriteIndent(m) == nil && !m.diff && m.off == len(golden)
}

// WithoutDurations returns r with every event duration zeroed, for golden
// comparison.
func (r Report) WithoutDurations() Report {
	r.Events = trace.WithoutDurations(r.Events)
	return r
}

// zeroDurations is WithoutDurations in place, for a report nobody else
// holds: a 1,000-fixture replay need not copy every event list.
func (r *Report) zeroDurations() {
	for i := range r.Events {
		r.Events[i].DurationNS = 0
	}
}

// ParseDirection parses inbound or outbound.
func ParseDirection(s string) (gateway.Direction, error) {
	switch s {
	case "", "outbound":
		return gateway.Outbound, nil
	case "inbound":
		return gateway.Inbound, nil
	}
	return 0, fmt.Errorf("direction %q: want inbound or outbound", s)
}

// Spec turns one direction of a chain file (read with catalog.ReadChainFile)
// into a pipeline spec.
func Spec(cf *catalog.ChainFile, dir gateway.Direction) (pipeline.Spec, error) {
	spec := pipeline.Spec{Direction: dir, Mode: pipeline.Mode(cf.Mode)}
	for i, e := range cf.Direction(dir) {
		var cfg []byte
		if e.Config != nil {
			b, err := json.Marshal(e.Config)
			if err != nil {
				return spec, fmt.Errorf("%s: entry %d (%s): config: %w", cf.Path, i+1, e.Name, err)
			}
			cfg = b
		}
		spec.Entries = append(spec.Entries, pipeline.Entry{Plugin: e.Name, Config: cfg, OnError: pipeline.OnError(e.OnError)})
	}
	if len(spec.Entries) == 0 {
		return spec, fmt.Errorf("%s: no %s chain entries; add an %q list or pick the other --direction", cf.Path, dirName(dir), dirName(dir))
	}
	return spec, nil
}

func dirName(d gateway.Direction) string {
	if d == gateway.Inbound {
		return "inbound"
	}
	return "outbound"
}

// Chain is a started chain built from a chain file, ready for exchanges.
type Chain struct {
	*pipeline.Chain
	Path      string
	Direction gateway.Direction
}

// LoadChain reads a chain file through the catalog's loader, builds the
// given direction with factories and starts it. Close stops it.
func LoadChain(ctx context.Context, path string, dir gateway.Direction, factories []gateway.Factory) (*Chain, error) {
	cf, err := catalog.ReadChainFile(path)
	if err != nil {
		return nil, err
	}
	spec, err := Spec(cf, dir)
	if err != nil {
		return nil, err
	}
	c, err := pipeline.Build(spec, factories, pipeline.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("%s: start chain: %w", path, err)
	}
	return &Chain{Chain: c, Path: path, Direction: dir}, nil
}

// Close stops the chain.
func (c *Chain) Close(ctx context.Context) error { return c.Stop(ctx) }

// Chunking says how a recorded streamed body is fed to the runtime.
type Chunking int

const (
	// AsRecorded feeds each recorded chunk as one read.
	AsRecorded Chunking = iota
	// Bytes1 and Bytes2 feed the body 1 and 2 bytes at a time.
	Bytes1
	Bytes2
	// AtLineEnds cuts the body before and after every CR and LF.
	AtLineEnds
)

func (c Chunking) String() string {
	switch c {
	case Bytes1:
		return "1-byte chunks"
	case Bytes2:
		return "2-byte chunks"
	case AtLineEnds:
		return "chunks cut at every CR/LF"
	}
	return "recorded chunks"
}

// chunkStream replays chunks in order; it ignores time offsets, so replay
// runs as fast as the chain does.
func chunkStream(cs []fixture.Chunk) *chunks.Stream {
	data := make([][]byte, len(cs))
	for i, c := range cs {
		data[i] = c.Data
	}
	return chunks.New(data)
}

// Rechunk returns body cut as c says.
func Rechunk(body []byte, c Chunking) []fixture.Chunk {
	var out []fixture.Chunk
	switch c {
	case Bytes1, Bytes2:
		n := int(c)
		for i := 0; i < len(body); i += n {
			out = append(out, fixture.Chunk{Data: body[i:min(i+n, len(body))]})
		}
	case AtLineEnds:
		start := 0
		for i, b := range body {
			if b == '\r' || b == '\n' {
				if i > start {
					out = append(out, fixture.Chunk{Data: body[start:i]})
				}
				out = append(out, fixture.Chunk{Data: body[i : i+1]})
				start = i + 1
			}
		}
		if start < len(body) {
			out = append(out, fixture.Chunk{Data: body[start:]})
		}
	default:
		out = []fixture.Chunk{{Data: body}}
	}
	return out
}

// Discard is a ClientWriter that keeps nothing.
type discard struct{}

func (discard) WriteHeader(int, http.Header) {}
func (discard) Write(p []byte) (int, error)  { return len(p), nil }
func (discard) Flush()                       {}

// Run replays f through c and returns the report. Durations are real; use
// WithoutDurations to compare. Reasons, errors and warnings pass through
// redact.String so no credential reaches a trace.
func Run(ctx context.Context, c *pipeline.Chain, f *fixture.Fixture, ch Chunking) Report {
	rec := trace.NewRecorder()
	up := pipeline.Upstream{Status: f.Response.Status, Header: f.Response.Header.Clone()}
	switch {
	case f.Response.Streamed() && ch == AsRecorded:
		up.Stream = chunkStream(f.Response.Chunks)
	case ch != AsRecorded:
		up.Stream = chunkStream(Rechunk(f.Response.BodyBytes(), ch))
	default:
		up.Body = f.Response.Body
	}
	r := run(ctx, c, f, up, rec)
	// Take, not Events: the report owns the trace, so the deep copy would
	// only cost an allocation per frame event. An abandoned finisher (P28)
	// that adds an event later adds it to the recorder, not to this slice.
	r.Events = rec.Take()
	for i := range r.Events {
		redactEvent(&r.Events[i])
	}
	return r
}

// ReportOf is the report of one finished exchange: its trace events (which
// it takes) and its result, with every reason, error and warning passed
// through redact.String. Replay and a live gateway (internal/replay/live)
// report through it, so a live exchange saved as a fixture replays to the
// same report.
func ReportOf(events []trace.Event, res *pipeline.Result) Report {
	r := resultReport(res)
	r.Events = events
	for i := range r.Events {
		redactEvent(&r.Events[i])
	}
	return r
}

// redactEvent passes an event's free text through redact.String.
func redactEvent(e *trace.Event) {
	// Most calls carry neither; skip the rules' scan for those.
	if e.Reason != "" || e.Error != "" {
		e.Reason, e.Error = redact.String(e.Reason), redact.String(e.Error)
	}
}

// run runs one exchange and returns the report without its events.
func run(ctx context.Context, c *pipeline.Chain, f *fixture.Fixture, up pipeline.Upstream, rec *trace.Recorder) Report {
	req := pipeline.RequestTo(f.Request.Method, f.Request.URL, f.Request.Header.Clone(), f.Request.Body)
	return resultReport(c.Run(ctx, req, up, pipeline.ExchangeOptions{Trace: rec, Client: discard{}}))
}

// resultReport is the report of res without its events: outcome and
// warnings, redacted.
func resultReport(res *pipeline.Result) Report {
	var r Report
	for _, w := range res.Warnings {
		r.Warnings = append(r.Warnings, redact.String(w.String()))
	}
	relayed := res.Relayed
	if !res.Streamed && res.Body != nil { // nil: relayed as it arrived
		relayed = int64(len(res.Body))
	}
	r.Outcome = Outcome{
		Kind:     res.Outcome.Kind.String(),
		Status:   res.Outcome.Status,
		DeniedBy: res.Outcome.DeniedBy,
		Reason:   redact.String(res.Outcome.Reason),
		Streamed: res.Streamed,
		Frames:   res.Frames,
		Relayed:  relayed,
	}
	return r
}

// fixtureStream feeds a fixture.Stream's chunks to the runtime as it reads
// them, and keeps the first read error, which is the run's error rather
// than an upstream failure.
type fixtureStream struct {
	s   *fixture.Stream
	err error
}

func (s *fixtureStream) Next(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := s.s.Next()
	if err != nil {
		if err != io.EOF {
			s.err = err
		}
		return nil, err
	}
	return c.Data, nil
}

// RunStream replays s through c as recorded, reading each chunk as the
// runtime asks for it and handing each event (redacted, numbered) to sink
// as the call ends, so that neither the body nor the trace is held: memory
// does not grow with the fixture. The event sink gets is valid only during
// the call (one is reused for every event, and its Frame points into the
// recorder): copy it, and its frame index, to keep it. The
// report returned has no events. If sink fails, the run is cancelled and
// its error returned; a chunk that cannot be read (the file changed after
// Open) is returned too.
func RunStream(ctx context.Context, c *pipeline.Chain, s *fixture.Stream, sink func(*trace.Event) error) (Report, error) {
	f := s.Fixture
	up := pipeline.Upstream{Status: f.Response.Status, Header: f.Response.Header.Clone()}
	var fs *fixtureStream
	if s.Chunks > 0 {
		fs = &fixtureStream{s: s}
		up.Stream = fs
	} else {
		up.Body = f.Response.Body
	}
	r, err := runSink(ctx, c, f, up, true, sink)
	if err == nil && fs != nil && fs.err != nil {
		err = fs.err
	}
	return r, err
}

// runSink runs f with upstream up, handing each event (redacted, numbered)
// to sink as the call ends; the report returned has no events. Events
// carry durations only when timed is true. A sink error cancels the run
// and is returned.
func runSink(ctx context.Context, c *pipeline.Chain, f *fixture.Fixture, up pipeline.Upstream, timed bool, sink func(*trace.Event) error) (Report, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	g := &sinkGate{cancel: cancel}
	var ev trace.Event // one for every event: &e would escape, an allocation per event
	rec := trace.NewStreamRecorder(func(e trace.Event) {
		if !g.enter() {
			return
		}
		ev = e
		redactEvent(&ev)
		g.leave(sink(&ev))
	})
	if !timed {
		rec.WithoutDurations()
	}
	r := run(ctx, c, f, up, rec)
	return r, g.close()
}

// sinkGate guards a run's event sink. The recorder serialises sink calls;
// the gate's lock also covers reading the sink's error after the run, and
// closed, which drops an event that a finisher abandoned past its deadline
// (P28) adds after the run has returned.
type sinkGate struct {
	mu     sync.Mutex
	err    error
	closed bool
	cancel context.CancelCauseFunc
}

// enter reports whether the sink takes the next event; if so, the caller
// hands it over and calls leave.
func (g *sinkGate) enter() bool {
	g.mu.Lock()
	if g.err != nil || g.closed {
		g.mu.Unlock()
		return false
	}
	return true
}

// leave ends a sink call; an error stops the run and is kept.
func (g *sinkGate) leave(err error) {
	if err != nil {
		g.err = err
		g.cancel(err)
	}
	g.mu.Unlock()
}

// close drops every later event and returns the sink's error.
func (g *sinkGate) close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return g.err
}

// fileMatch compares what is written to it with a file's bytes as it
// reads them, a buffer at a time: the replay worker's buffer, reused for
// every golden, so that none costs an allocation and one over the
// buffer's bound (1 MiB) is never held whole.
type fileMatch struct {
	fh     *os.File
	buf    []byte
	lo, hi int // buf[lo:hi] is read and not yet compared
	diff   bool
	// left is what is still to be read of the size the file had when
	// opened: the end is known without a read that finds it (one system
	// call per golden of a corpus). A file that changes while it is
	// compared is a race the replay does not guard against.
	left int64
}

func (m *fileMatch) Write(p []byte) (int, error) {
	for q := p; !m.diff && len(q) > 0; {
		if m.lo == m.hi && !m.fill() {
			m.diff = true // the file is shorter
			break
		}
		n := min(len(q), m.hi-m.lo)
		if !bytes.Equal(m.buf[m.lo:m.lo+n], q[:n]) {
			m.diff = true
			break
		}
		m.lo += n
		q = q[n:]
	}
	return len(p), nil
}

// fill reads the next bytes of the file into buf; false at its end or on
// an error (either way, nothing more to compare).
func (m *fileMatch) fill() bool {
	for m.left > 0 {
		n, err := m.fh.Read(m.buf[:min(int64(len(m.buf)), m.left)])
		if n > 0 {
			m.lo, m.hi = 0, n
			m.left -= int64(n)
			return true
		}
		if err != nil {
			return false
		}
	}
	return false
}

// atEnd reports whether every byte of the file was compared.
func (m *fileMatch) atEnd() bool { return m.lo == m.hi && m.left == 0 }

// scratch is what one replay worker reuses from one fixture to the next:
// a golden comparison then allocates no read buffer of its own.
type scratch struct {
	buf   []byte
	forms []frameForm
}

// goldenBuf and maxGoldenBuf bound a worker's golden read buffer, which
// grows to the largest golden it compared up to maxGoldenBuf.
const (
	goldenBuf    = 64 << 10
	maxGoldenBuf = 1 << 20
)

// matchesGolden replays f as recorded and reports whether its report, in
// the canonical golden form, is exactly the file golden. Each event is
// compared with the file as it happens and dropped, so neither the trace
// nor the file is held. A file that cannot be compared so (missing, not
// a regular file, over the size limit) or a difference is false: runCase
// then reads it and replays again to report why. sc is the worker's
// scratch (nil: a fresh one).
func matchesGolden(ctx context.Context, c *pipeline.Chain, f *fixture.Fixture, golden string, sc *scratch) bool {
	fh, err := os.Open(golden)
	if err != nil {
		return false
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > fixture.MaxFile() {
		return false
	}
	up := pipeline.Upstream{Status: f.Response.Status, Header: f.Response.Header.Clone()}
	if f.Response.Streamed() {
		up.Stream = &fixtureChunks{cs: f.Response.Chunks}
	} else {
		up.Body = f.Response.Body
	}
	if sc == nil {
		sc = &scratch{}
	}
	// Room for the whole file, up to maxGoldenBuf: one read. A buffer
	// smaller than goldenBuf (a test's) is kept as it is.
	if need := int(min(st.Size(), maxGoldenBuf)); sc.buf == nil || (len(sc.buf) >= goldenBuf && len(sc.buf) < need) {
		sc.buf = make([]byte, max(need, goldenBuf))
	}
	m := &fileMatch{fh: fh, buf: sc.buf, left: st.Size()}
	rw := NewReportWriter(m)
	rw.forms = &sc.forms
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	g := &sinkGate{cancel: cancel}
	// runSink's sink, with rw called directly: the event stays on this
	// function's stack, where runSink copies it to the heap for a sink it
	// does not know (with the GC's write barriers on every copy).
	// Goldens hold no durations: the replay reads no clock.
	rec := trace.NewStreamRecorder(func(e trace.Event) {
		if !g.enter() {
			return
		}
		redactEvent(&e)
		err := rw.Event(&e)
		if err == nil && m.diff {
			err = errDiffers // stop early: the full replay explains it
		}
		g.leave(err)
	}).WithoutDurations()
	r := run(ctx, c, f, up, rec)
	if g.close() != nil || rw.Finish(r.Outcome, r.Warnings) != nil || m.diff {
		return false
	}
	return m.atEnd() // and not a longer file
}

// fixtureChunks feeds a fixture's recorded chunks to the runtime, one a
// read, as chunkStream does, without a slice of them of its own (the
// comparison runs once per fixture of a corpus).
type fixtureChunks struct {
	cs []fixture.Chunk
	i  int
}

func (s *fixtureChunks) Next(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.i >= len(s.cs) {
		return nil, io.EOF
	}
	s.i++
	return s.cs[s.i-1].Data, nil
}

// errDiffers stops a golden comparison at the first difference.
var errDiffers = errors.New("differs from the golden report")

// ErrDiff marks a replay whose trace differs from its golden file.
var ErrDiff = errors.New("trace differs from golden")
