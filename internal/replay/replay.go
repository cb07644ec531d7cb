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

	"github.com/abkit/abkit/internal/catalog"
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
	var line bytes.Buffer
	enc := json.NewEncoder(&line) // escapes HTML, as json.Marshal does
	// put writes v's JSON, without the encoder's trailing newline.
	put := func(prefix string, v any) error {
		line.Reset()
		line.WriteString(prefix)
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := w.Write(line.Bytes()[:line.Len()-1])
		return err
	}
	if _, err := io.WriteString(w, "{\n  \"events\": ["); err != nil {
		return err
	}
	for i := range r.Events {
		prefix := ",\n    "
		if i == 0 {
			prefix = "\n    "
		}
		if err := put(prefix, &r.Events[i]); err != nil {
			return err
		}
	}
	tail := "],\n  \"outcome\": "
	if len(r.Events) > 0 {
		tail = "\n  " + tail
	}
	if err := put(tail, r.Outcome); err != nil {
		return err
	}
	if len(r.Warnings) > 0 {
		prefix := ",\n  \"warnings\": [\n    "
		for _, wn := range r.Warnings {
			if err := put(prefix, wn); err != nil {
				return err
			}
			prefix = ",\n    "
		}
		if _, err := io.WriteString(w, "\n  ]"); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n}\n")
	return err
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
				return spec, fmt.Errorf("%s: entry %d (%s): config: %w", cf.Path, i, e.Name, err)
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
type chunkStream struct {
	chunks []fixture.Chunk
	i      int
}

func (s *chunkStream) Next(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.i >= len(s.chunks) {
		return nil, io.EOF
	}
	c := s.chunks[s.i].Data
	s.i++
	return c, nil
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
	req := pipeline.Request{Method: f.Request.Method, URL: f.Request.URL, Header: f.Request.Header.Clone(), Body: f.Request.Body}
	up := pipeline.Upstream{Status: f.Response.Status, Header: f.Response.Header.Clone()}
	switch {
	case f.Response.Streamed() && ch == AsRecorded:
		up.Stream = &chunkStream{chunks: f.Response.Chunks}
	case ch != AsRecorded:
		up.Stream = &chunkStream{chunks: Rechunk(f.Response.BodyBytes(), ch)}
	default:
		up.Body = f.Response.Body
	}
	res := c.Run(ctx, req, up, pipeline.ExchangeOptions{Trace: rec, Client: discard{}})
	return ReportOf(rec.Events(), res)
}

// ReportOf is the report of one finished exchange: its trace events (which
// it takes) and its result, with every reason, error and warning passed
// through redact.String. Replay and a live gateway (internal/replay/live)
// report through it, so a live exchange saved as a fixture replays to the
// same report.
func ReportOf(events []trace.Event, res *pipeline.Result) Report {
	r := Report{Events: events}
	for i := range r.Events {
		// Most calls carry neither; skip the rules' scan for those.
		if e := &r.Events[i]; e.Reason != "" || e.Error != "" {
			e.Reason, e.Error = redact.String(e.Reason), redact.String(e.Error)
		}
	}
	for _, w := range res.Warnings {
		r.Warnings = append(r.Warnings, redact.String(w.String()))
	}
	relayed := res.Relayed
	if !res.Streamed {
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

// ErrDiff marks a replay whose trace differs from its golden file.
var ErrDiff = errors.New("trace differs from golden")
