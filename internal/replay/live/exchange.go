package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/replay/record"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// Summary is one exchange in the list: what an operator scans for.
type Summary struct {
	ID      uint64    `json:"id"`
	Started time.Time `json:"started"`
	Method  string    `json:"method"`
	// Path is the request path as sent, token-shaped segments redacted.
	Path string `json:"path"`
	// Status is what the client got.
	Status int `json:"status"`
	// Outcome is allow, deny or error (docs/replay.md).
	Outcome    string `json:"outcome"`
	DeniedBy   string `json:"denied_by,omitempty"`
	Reason     string `json:"reason,omitempty"`
	DurationNS int64  `json:"duration_ns"`
	Streamed   bool   `json:"streamed"`
	Frames     int    `json:"frames"`
	// Cut marks an exchange ended by a shutdown (ErrCut).
	Cut bool `json:"cut,omitempty"`
	// Fixture is the file the exchange was recorded to, with a record
	// directory.
	Fixture string `json:"fixture,omitempty"`
}

// Exchange is one finished exchange as the ring keeps it.
//
// The ring is memory only and is never served as it is: every API read
// goes through view, which redacts. An exchange whose bodies fit the body
// cap is kept as it arrived and redacted when it is read, so serving it
// costs no redaction (most exchanges are never looked at). One with a
// larger body is redacted whole at once and cut to the cap, since a
// credential across the cut would not be recognised in the cut part.
type Exchange struct {
	Summary
	Report replay.Report
	// called: the upstream was called; sizes are the whole bodies'
	// lengths (request, upstream response) before the cap.
	called bool
	sizes  struct{ request, response int }
	// noFixture, when set, says why the exchange cannot be saved as a
	// fixture that replays it (besides a body over the cap, which view
	// finds).
	noFixture string
	// Exactly one of raw and redacted is set; truncated says whether
	// redacted was cut at the cap.
	raw       *rawExchange
	redacted  *fixture.Fixture
	truncated bool
}

// rawExchange is an exchange as it arrived, not redacted: what
// record.NewFixture turns into a (redacted) fixture.
type rawExchange struct {
	started     time.Time
	method, url string
	reqHeader   http.Header
	reqBody     []byte
	status      int
	respHeader  http.Header
	chunks      []fixture.Chunk
	placeholder bool // the chain denied before the upstream was called
	noResponse  bool // the upstream did not answer: no response to show
	inbound     bool
	source      string
}

// fixture returns the exchange as a fixture, redacted by
// record.NewFixture.
func (x *rawExchange) fixture() *fixture.Fixture {
	f := record.NewFixture(x.source, x.started, x.method, x.url, x.reqHeader, x.reqBody, x.status, x.respHeader, x.chunks)
	if x.placeholder {
		f.Notes = append(f.Notes, "the chain denied the request before the upstream was called; the response is a placeholder a replay never reaches")
	}
	if x.inbound {
		f.Direction = "inbound"
	}
	if x.noResponse {
		f.Response = fixture.Response{}
	}
	return f
}

// view returns the exchange as the API shows it: redacted, each body cut
// at limit, whether a cut happened, and why it cannot be saved as a
// fixture ("" when it can).
func (ex *Exchange) view(limit int) (*fixture.Fixture, bool, string) {
	f, cut := ex.redacted, ex.truncated
	if ex.raw != nil {
		f, cut = capped(ex.raw.fixture(), limit)
	}
	why := ex.noFixture
	if why == "" && cut {
		why = "a body is larger than --body-cap; raise it or serve with --record to keep whole fixtures"
	}
	return f, cut, why
}

// finish reports, keeps and records one finished exchange.
func (s *Server) finish(ctx context.Context, r *http.Request, id uint64, started time.Time, path, target string, reqHeader http.Header, reqBody []byte,
	called bool, upStatus int, upHeader http.Header, upComplete bool, keep *capture, rec *trace.Recorder, res *pipeline.Result) {
	// The recorder is done with: its events are taken, not copied.
	rep := replay.ReportOf(s.fitTrace(rec.Take(), res.Streamed), res)
	capReport(&rep)
	cause := context.Cause(ctx)
	ex := &Exchange{Summary: Summary{ID: id, Started: started.UTC(), Method: r.Method, Path: path, Status: res.Status,
		Outcome: rep.Outcome.Kind, DeniedBy: rep.Outcome.DeniedBy, Reason: rep.Outcome.Reason,
		DurationNS: res.Outcome.Duration.Nanoseconds(), Streamed: res.Streamed, Frames: res.Frames,
		Cut: errors.Is(cause, ErrCut)}, Report: rep, called: called}
	ex.sizes.request, ex.sizes.response = len(reqBody), keep.size
	if ex.Cut {
		s.cutN.Add(1)
		s.log.Warn("exchange cut", "id", id, "method", r.Method, "path", path, "reason", ErrCut.Error())
	}

	// The fixture a replay reproduces: the request as sent and the
	// upstream's answer as read. It exists when the chain denied before
	// the upstream was called, or the upstream's body was read to its end
	// (or as far as the chain read it: a rejected frame ends a stream).
	// Otherwise the API still shows what was seen.
	raw := &rawExchange{started: started, method: r.Method, url: target, reqHeader: reqHeader, reqBody: reqBody,
		status: upStatus, respHeader: upHeader, chunks: keep.chunks, inbound: s.chain.Direction() == gateway.Inbound, source: s.source}
	switch {
	case cause != nil:
		ex.noFixture = "the exchange did not finish: " + redact.String(cause.Error())
	case !called:
		raw.status, raw.respHeader, raw.placeholder = http.StatusBadGateway, http.Header{}, true
	case upStatus == 0:
		ex.noFixture = "the upstream did not answer; a fixture cannot hold a network failure"
	case !upComplete && res.Outcome.Kind != gateway.OutcomeDeny:
		ex.noFixture = "the upstream's body was not read to its end: " + rep.Outcome.Reason
	case keep.over:
		ex.noFixture = "the response body is larger than the fixture limit"
		if s.opts.RecordDir == "" {
			ex.noFixture = "the response body is larger than --body-cap; raise it or serve with --record"
		}
	}
	if ex.noFixture != "" {
		// Shown, not replayed: a status a fixture can hold.
		raw.status = max(upStatus, 100)
		raw.noResponse = upStatus == 0
	}
	var whole *fixture.Fixture // the redacted fixture, when made here
	if len(reqBody) <= s.opts.BodyCap && keep.size <= s.opts.BodyCap && !keep.over {
		ex.raw = raw
	} else {
		whole = raw.fixture()
		ex.redacted, ex.truncated = capped(whole, s.opts.BodyCap)
	}
	// The summary as it finished: once the exchange is in the ring, the
	// fixture writer may name its file there.
	sum := ex.Summary
	s.served.Add(1)
	s.ring.add(ex)
	if s.events.active() {
		s.events.publish("exchange_finished", sum)
	}
	if ex.noFixture == "" && s.opts.RecordDir != "" {
		s.inflight.Add(1)
		select {
		case s.queued <- struct{}{}:
		default:
			s.queueFull.Add(1)
			s.queued <- struct{}{}
		}
		// Named now: the sequence follows the order exchanges finished.
		go s.write(ex.ID, raw, whole, record.FileName(s.now(), s.fileSeq.Add(1), r))
	}
}

// maxStreamRoom bounds the room a streamed exchange's trace is given at
// once (Server.streamRoom): 8,192 events of 248 bytes, about 2 MiB. A longer
// stream's trace grows by blocks past it.
const maxStreamRoom = 8192

// fitTrace notes how many events a streamed exchange recorded, for the
// next one's room, and returns events, copied to their length when the
// room made for them was well over it (the ring would keep the rest).
func (s *Server) fitTrace(events []trace.Event, streamed bool) []trace.Event {
	if streamed {
		s.streamRoom.Store(int64(min(len(events), maxStreamRoom)))
	}
	if spare := cap(events) - len(events); spare > max(64, len(events)/4) {
		return slices.Clone(events)
	}
	return events
}

// write records one exchange's fixture to the record directory, named
// by name. It runs after the client's response ended, as record does; f
// is the redacted fixture when finish made it already.
func (s *Server) write(id uint64, raw *rawExchange, f *fixture.Fixture, name func(string) string) {
	defer s.inflight.Done()
	defer func() { <-s.queued }()
	if s.opts.writeGate != nil {
		s.opts.writeGate()
	}
	s.writers <- struct{}{}
	var once sync.Once
	release := func() { once.Do(func() { <-s.writers }) }
	defer release()
	if f == nil {
		f = raw.fixture()
	}
	data, err := fixture.Marshal(f)
	if err != nil {
		s.log.Error("exchange not recorded", "id", id, "err", err)
		return
	}
	dir := s.opts.RecordDir
	tmp, err := fixture.WriteTemp(dir, data, record.SyncEach())
	if err != nil {
		s.log.Error("exchange not recorded", "id", id, "err", err)
		return
	}
	// The CPU-heavy part is done: let the next writer in while this one
	// waits for its file to be on disk.
	release()
	if err := s.durable.Wait(dir); err != nil {
		os.Remove(tmp)
		s.log.Error("exchange not recorded", "id", id, "err", fmt.Errorf("sync %s: %w", dir, err))
		return
	}
	file, err := fixture.LinkUnique(dir, tmp, name)
	if err != nil {
		s.log.Error("exchange not recorded", "id", id, "err", err)
		return
	}
	// No list of the files is kept: serve runs for days, and the
	// directory is the list.
	s.recorded.Add(1)
	s.ring.setFixture(id, file)
}

// MaxReason is the most of one reason, error or warning text the ring
// keeps: 8 exchanges with plugin reasons of hundreds of MiB once held
// 1.8 GiB, and GET /exchanges returned 734 MB.
const MaxReason = 4 << 10

// capText cuts s to MaxReason bytes, on a character boundary, saying how
// much was cut.
func capText(s string) string {
	if len(s) <= MaxReason {
		return s
	}
	n := MaxReason
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d more bytes cut)", s[:n], len(s)-n)
}

// capReport caps every free text of rep (MaxReason).
func capReport(rep *replay.Report) {
	rep.Outcome.Reason = capText(rep.Outcome.Reason)
	for i := range rep.Events {
		e := &rep.Events[i]
		e.Reason, e.Error = capText(e.Reason), capText(e.Error)
	}
	for i, w := range rep.Warnings {
		rep.Warnings[i] = capText(w)
	}
}

// capped returns a copy of f with each body cut at limit bytes, and
// whether anything was cut.
func capped(f *fixture.Fixture, limit int) (*fixture.Fixture, bool) {
	g := *f
	cut := false
	if len(g.Request.Body) > limit {
		g.Request.Body, cut = g.Request.Body[:limit:limit], true
	}
	if len(g.Response.Body) > limit {
		g.Response.Body, cut = g.Response.Body[:limit:limit], true
	}
	if len(g.Response.Chunks) > 0 {
		n := 0
		var chunks []fixture.Chunk
		for _, c := range g.Response.Chunks {
			if n+len(c.Data) > limit {
				if rest := limit - n; rest > 0 {
					chunks = append(chunks, fixture.Chunk{At: c.At, Data: c.Data[:rest:rest]})
				}
				cut = true
				break
			}
			n += len(c.Data)
			chunks = append(chunks, c)
		}
		g.Response.Chunks = chunks
	}
	return &g, cut
}
