package live

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/netlimit"
	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// API paths, under APIPrefix.
const (
	PathPlugins   = APIPrefix + "v1/plugins"
	PathPipeline  = APIPrefix + "v1/pipeline"
	PathExchanges = APIPrefix + "v1/exchanges"
	PathEvents    = APIPrefix + "v1/events"
)

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		apiError(w, http.StatusMethodNotAllowed, "the abkit API is read-only: use GET")
		return
	}
	p := r.URL.Path
	switch {
	case p == PathPlugins:
		writeJSON(w, s.plugins())
	case p == PathPipeline:
		writeJSON(w, s.pipeline())
	case p == PathExchanges:
		writeJSON(w, exchangeList{Ring: s.ring.size(), BodyCap: s.opts.BodyCap, Served: s.served.Load(), Exchanges: s.ring.summaries()})
	case strings.HasPrefix(p, PathExchanges+"/"):
		s.exchange(w, strings.TrimPrefix(p, PathExchanges+"/"))
	case p == PathEvents:
		s.stream(w, r)
	default:
		apiError(w, http.StatusNotFound, fmt.Sprintf("no API endpoint %s; see docs/live.md (%s, %s, %s, %s/{id}, %s)", redact.URL(p), PathPlugins, PathPipeline, PathExchanges, PathExchanges, PathEvents))
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// plugins lists the plugins of the running chain, each once.
func (s *Server) plugins() map[string][]catalog.WirePlugin {
	schemas := map[string][]gateway.Field{}
	for _, f := range s.opts.Factories {
		if f.Config != nil {
			if _, ok := schemas[f.Name]; !ok {
				schemas[f.Name] = f.Config.Fields
			}
		}
	}
	out := []catalog.WirePlugin{}
	seen := map[string]bool{}
	for _, name := range s.chain.Names() {
		if seen[name] {
			continue
		}
		seen[name] = true
		c, _ := s.chain.Capabilities(name)
		out = append(out, catalog.WirePlugin{Name: name, Description: c.Description, ReadsBody: c.ReadsBody,
			WritesRequestBody: c.WritesRequestBody, WritesResponseBody: c.WritesResponseBody,
			Requires: nonNil(c.Requires), RequiresAny: nonNil(c.RequiresAny), Fields: fieldsOrEmpty(schemas[name])})
	}
	return map[string][]catalog.WirePlugin{"plugins": out}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// pipeline is the running chain: the served direction's active entries in
// order (positions from 1), configs redacted; the other direction is
// empty, since serve runs one.
func (s *Server) pipeline() map[string][]catalog.WireLive {
	out := map[string][]catalog.WireLive{"inbound": {}, "outbound": {}}
	dir := s.chain.Direction()
	var list []catalog.WireLive
	if cf := s.opts.ChainFile; cf != nil {
		for _, e := range cf.Direction(dir) {
			if e.OnError == "off" {
				continue
			}
			c, _ := s.chain.Capabilities(e.Name)
			list = append(list, catalog.WireLive{Name: e.Name, Position: len(list) + 1, Description: c.Description, Config: redactConfig(e.Config)})
		}
	} else {
		for _, name := range s.chain.Names() {
			c, _ := s.chain.Capabilities(name)
			list = append(list, catalog.WireLive{Name: name, Position: len(list) + 1, Description: c.Description})
		}
	}
	if list == nil {
		list = []catalog.WireLive{}
	}
	out[dir.String()] = list
	return out
}

// redactConfig removes credentials from a chain entry's config, as from a
// JSON body: an API key in a config block must not leave the process.
func redactConfig(c any) map[string]any {
	if c == nil {
		return map[string]any{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return map[string]any{}
	}
	var out map[string]any
	if json.Unmarshal(redact.Bytes(b), &out) != nil {
		return map[string]any{}
	}
	return out
}

type exchangeList struct {
	// Ring is how many exchanges are kept; BodyCap the bytes kept of each
	// body; Served the exchanges finished since start (the ring holds the
	// last Ring of them).
	Ring      int       `json:"ring"`
	BodyCap   int       `json:"body_cap"`
	Served    int64     `json:"served"`
	Exchanges []Summary `json:"exchanges"`
}

// Body is a body as the API shows it: text when it is valid UTF-8, else
// base64; Size is the whole body's length and Truncated says whether the
// shown part was cut at the body cap.
type Body struct {
	Text      *string `json:"text,omitempty"`
	Base64    string  `json:"base64,omitempty"`
	Size      int     `json:"size"`
	Truncated bool    `json:"truncated,omitempty"`
}

func bodyOf(b []byte, size int) *Body {
	if b == nil && size == 0 {
		return nil
	}
	out := &Body{Size: size, Truncated: len(b) < size}
	if utf8.Valid(b) {
		t := string(b)
		out.Text = &t
	} else {
		out.Base64 = base64.StdEncoding.EncodeToString(b)
	}
	return out
}

type wireRequest struct {
	Method string      `json:"method"`
	URL    string      `json:"url"`
	Header http.Header `json:"header"`
	Body   *Body       `json:"body,omitempty"`
}

type wireChunk struct {
	AtNS int64 `json:"at_ns"`
	Body
}

type wireResponse struct {
	// Status is the upstream's; 0 when it did not answer or was not
	// called.
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   *Body       `json:"body,omitempty"`
	Chunks []wireChunk `json:"chunks,omitempty"`
	// Size is the whole body's length; Truncated says the body or chunks
	// shown stop at the body cap.
	Size      int  `json:"size"`
	Truncated bool `json:"truncated,omitempty"`
}

type exchangeDetail struct {
	Exchange Summary       `json:"exchange"`
	Trace    replay.Report `json:"trace"`
	Request  wireRequest   `json:"request"`
	// Upstream is what the upstream answered (not what the client got);
	// absent when the chain denied before the upstream was called.
	Upstream *wireResponse `json:"upstream,omitempty"`
	BodyCap  int           `json:"body_cap"`
	// Fixture says whether GET …/exchanges/{id}/fixture returns a fixture
	// that replays this exchange; NoFixture says why not.
	Fixture   bool   `json:"fixture"`
	NoFixture string `json:"no_fixture,omitempty"`
}

func (s *Server) exchange(w http.ResponseWriter, rest string) {
	idText, sub, _ := strings.Cut(rest, "/")
	id, err := strconv.ParseUint(idText, 10, 64)
	if err != nil || (sub != "" && sub != "fixture") {
		apiError(w, http.StatusNotFound, fmt.Sprintf("want %s/{id} or %s/{id}/fixture with a numeric id", PathExchanges, PathExchanges))
		return
	}
	ex, ok := s.ring.get(id)
	if !ok {
		apiError(w, http.StatusNotFound, fmt.Sprintf("exchange %d is not in the ring (the last %d exchanges are kept)", id, s.ring.size()))
		return
	}
	if sub == "fixture" {
		s.fixture(w, ex)
		return
	}
	writeJSON(w, s.detail(ex))
}

// detail is the exchange as …/exchanges/{id} shows it, redacted.
func (s *Server) detail(ex Exchange) exchangeDetail {
	f, _, why := ex.view(s.opts.BodyCap)
	d := exchangeDetail{Exchange: ex.Summary, Trace: ex.Report, BodyCap: s.opts.BodyCap,
		Fixture: why == "" || ex.Summary.Fixture != "", NoFixture: why}
	if d.Fixture {
		d.NoFixture = ""
	}
	if d.Trace.Events == nil {
		d.Trace.Events = []trace.Event{}
	}
	d.Request = wireRequest{Method: f.Request.Method, URL: f.Request.URL, Header: f.Request.Header}
	d.Request.Body = bodyOf(f.Request.Body, max(len(f.Request.Body), ex.sizes.request))
	if ex.called && f.Response.Status != 0 {
		r := &wireResponse{Status: f.Response.Status, Header: f.Response.Header, Size: ex.sizes.response}
		if len(f.Response.Chunks) > 0 {
			n := 0
			for _, c := range f.Response.Chunks {
				r.Chunks = append(r.Chunks, wireChunk{AtNS: c.At.Nanoseconds(), Body: *bodyOf(c.Data, len(c.Data))})
				n += len(c.Data)
			}
			r.Truncated = n < r.Size
		} else {
			r.Body = bodyOf(f.Response.Body, r.Size)
			r.Truncated = len(f.Response.Body) < r.Size
		}
		d.Upstream = r
	}
	return d
}

// fixture serves the exchange as a fixture file: the recorded file when
// there is one, else the ring's copy when it is whole.
func (s *Server) fixture(w http.ResponseWriter, ex Exchange) {
	var data []byte
	var err error
	if ex.Summary.Fixture != "" {
		data, err = os.ReadFile(ex.Summary.Fixture)
	} else {
		f, _, why := ex.view(s.opts.BodyCap)
		if why != "" {
			apiError(w, http.StatusConflict, fmt.Sprintf("exchange %d cannot be saved as a fixture: %s", ex.ID, why))
			return
		}
		data, err = fixture.Marshal(f)
	}
	if err != nil {
		apiError(w, http.StatusInternalServerError, fmt.Sprintf("exchange %d: %v", ex.ID, err))
		return
	}
	name := fmt.Sprintf("%s-%d-%s%s", ex.Started.Format("20060102T150405"), ex.ID, strings.ToLower(fixture.NamePart(ex.Method, "request")), fixture.Ext)
	if ex.Summary.Fixture != "" {
		name = filepath.Base(ex.Summary.Fixture)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	_, _ = w.Write(data)
}

// stream serves /v1/events: server-sent events until the client goes,
// the server stops (event "shutdown") or the client falls so far behind
// that its next event left the log (event "overflow"). A client whose
// writes stall for EventWriteTimeout is cut. A client that reconnects
// with Last-Event-ID gets the events after it that the log still holds,
// after an event "missed" counting those it no longer does.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	last, _ := strconv.ParseUint(strings.TrimSpace(r.Header.Get("Last-Event-ID")), 10, 64)
	sub, ok := s.events.subscribe(last)
	if !ok {
		apiError(w, http.StatusServiceUnavailable, "abctl serve is stopping")
		return
	}
	defer s.events.unsubscribe(sub)
	timeout := s.opts.EventWriteTimeout
	bounded := netlimit.SetWriteTimeout(w, timeout)
	write := func(b []byte) error {
		if !bounded {
			_ = rc.SetWriteDeadline(time.Now().Add(timeout))
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	// A comment first: the client knows it is subscribed before it sends
	// traffic it wants to watch.
	buf := fmt.Appendf(nil, ": abkit live events; subscribed %s\n\n", time.Now().UTC().Format(time.RFC3339))
	if write(buf) != nil {
		return
	}
	var batch []message
	resumed := last > 0
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.wake:
		}
		var missed uint64
		var done bool
		batch, missed, done = s.events.read(sub, batch[:0], eventBatch)
		buf = buf[:0]
		switch {
		case missed > 0 && resumed:
			buf = fmt.Appendf(buf, "event: missed\ndata: {\"missed\":%d}\n\n", missed)
		case missed > 0:
			buf = fmt.Appendf(buf, "event: overflow\ndata: {\"missed\":%d,\"error\":\"this client fell %d events behind, past the %d the server keeps, and was disconnected; reconnect with Last-Event-ID and read %s for what was missed\"}\n\n",
				missed, missed, EventLogLen, PathExchanges)
			_ = write(buf)
			return
		}
		resumed = false
		for _, m := range batch {
			buf = fmt.Appendf(buf, "id: %d\nevent: %s\ndata: %s\n\n", m.id, m.name, m.data)
		}
		clear(batch) // the log may let these go
		if done {
			buf = append(buf, "event: shutdown\ndata: {}\n\n"...)
		}
		if len(buf) > 0 && write(buf) != nil {
			return
		}
		if done {
			return
		}
		if cap(buf) > 4*eventBatch {
			buf = nil // a burst's buffer is not kept for ever
		}
	}
}

// eventBatch is about the most event data written to a subscriber at
// once: a subscriber that keeps up gets a burst in few writes.
const eventBatch = 256 << 10

func fieldsOrEmpty(f []gateway.Field) []gateway.Field {
	if f == nil {
		return []gateway.Field{}
	}
	return f
}
