package live

import (
	"context"
	"errors"
	"net/http"
	"time"

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
type Exchange struct {
	Summary
	Report replay.Report
	// Fixture is the redacted exchange with bodies cut at the body cap;
	// Truncated says whether a cut happened.
	Fixture   *fixture.Fixture
	Truncated bool
	// NoFixture, when set, says why the exchange cannot be saved as a
	// fixture that replays it.
	NoFixture string
	// called: the upstream was called; sizes are the whole bodies'
	// lengths (request, upstream response) before the cap.
	called bool
	sizes  struct{ request, response int }
}

// finish reports, keeps and records one finished exchange.
func (s *Server) finish(ctx context.Context, r *http.Request, id uint64, started time.Time, path, target string, reqHeader http.Header, reqBody []byte,
	called bool, upStatus int, upHeader http.Header, upComplete bool, keep *capture, rec *trace.Recorder, res *pipeline.Result) {
	rep := replay.ReportOf(rec.Events(), res)
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
	var f *fixture.Fixture
	switch {
	case cause != nil:
		ex.NoFixture = "the exchange did not finish: " + redact.String(cause.Error())
	case !called:
		f = record.NewFixture(s.source(), started, r.Method, target, reqHeader, reqBody, http.StatusBadGateway, http.Header{}, nil)
		f.Notes = append(f.Notes, "the chain denied the request before the upstream was called; the response is a placeholder a replay never reaches")
	case upStatus == 0:
		ex.NoFixture = "the upstream did not answer; a fixture cannot hold a network failure"
	case !upComplete && res.Outcome.Kind != gateway.OutcomeDeny:
		ex.NoFixture = "the upstream's body was not read to its end: " + rep.Outcome.Reason
	case keep.over:
		ex.NoFixture = "the response body is larger than the fixture limit"
		if s.opts.RecordDir == "" {
			ex.NoFixture = "the response body is larger than --body-cap; raise it or serve with --record"
		}
	default:
		f = record.NewFixture(s.source(), started, r.Method, target, reqHeader, reqBody, upStatus, upHeader, keep.chunks)
	}
	if f != nil {
		if s.chain.Direction() == gateway.Inbound {
			f.Direction = "inbound"
		}
		ex.Fixture, ex.Truncated = capped(f, s.opts.BodyCap)
		if ex.Truncated {
			ex.NoFixture = "a body is larger than --body-cap; raise it or serve with --record to keep whole fixtures"
		}
	} else {
		// Still show what was seen, redacted and capped.
		g := record.NewFixture(s.source(), started, r.Method, target, reqHeader, reqBody, max(upStatus, 100), upHeader, keep.chunks)
		ex.Fixture, ex.Truncated = capped(g, s.opts.BodyCap)
		if upStatus == 0 {
			ex.Fixture.Response = fixture.Response{}
		}
	}
	s.served.Add(1)
	s.ring.add(ex)
	if f != nil && s.opts.RecordDir != "" {
		s.inflight.Add(1)
		go s.write(ex.ID, f, r)
	}
	if s.events.active() {
		s.events.publish("exchange_finished", ex.Summary)
	}
}

func (s *Server) source() string { return "abctl serve --upstream " + redact.URL(s.upstream.String()) }

// write records one exchange's fixture to the record directory. It runs
// after the client's response ended, as record does.
func (s *Server) write(id uint64, f *fixture.Fixture, r *http.Request) {
	defer s.inflight.Done()
	data, err := fixture.Marshal(f)
	if err != nil {
		s.log.Error("exchange not recorded", "id", id, "err", err)
		return
	}
	name, err := fixture.CreateUnique(s.opts.RecordDir, record.FileName(s.now(), s.fileSeq.Add(1), r), data)
	if err != nil {
		s.log.Error("exchange not recorded", "id", id, "err", err)
		return
	}
	s.recorded.Add(1)
	s.mu.Lock()
	s.written = append(s.written, name)
	s.mu.Unlock()
	s.ring.setFixture(id, name)
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
