// Package auditlog is the audit-log example plugin. It uses every optional
// behaviour but streaming: Init starts it, Ready reports it ([P14]), OnFinish
// writes one JSON line per exchange with the outcome (P26, P29), and
// Shutdown stops it (P13).
//
// Lines go to an io.Writer; by default a bounded in-memory [Ring] that keeps
// the most recent lines, so an example never grows without bound. The URL
// is written with credentials redacted. When a parser ran, the line also
// names the MCP tools called or the inference model and token usage.
//
// [P14]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package auditlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/redact"
)

// Name is the plugin's registered name.
const Name = "audit-log"

// Description is the one-line catalog description (P5).
const Description = "Writes one audit line per exchange with its outcome; ready after Init"

// DefaultCapacity is the default number of lines the in-memory ring keeps.
const DefaultCapacity = 1000

// Outputs.
const (
	OutputMemory = "memory"
	OutputStderr = "stderr"
)

// Config is the plugin's configuration block.
type Config struct {
	// Output is memory (a bounded ring) or stderr.
	Output string `json:"output,omitempty"`
	// Capacity is the ring's size in lines.
	Capacity int `json:"capacity,omitempty"`
}

var schema = &gateway.ConfigSchema{Fields: []gateway.Field{
	{Name: "output", Type: "string", Default: OutputMemory, Enum: []string{OutputMemory, OutputStderr}, Description: "Where lines go: a bounded in-memory ring or standard error"},
	{Name: "capacity", Type: "integer", Default: DefaultCapacity, Description: "Lines the in-memory ring keeps; older lines are dropped"},
}}

// Schema returns the configuration schema.
func Schema() *gateway.ConfigSchema { return schema }

// Factory registers the plugin.
func Factory() gateway.Factory {
	return config.Factory(Name, schema, func(c Config) (*Logger, error) { return New(c, nil) })
}

// Record is one audit line.
type Record struct {
	Time       time.Time `json:"time"`
	Direction  string    `json:"direction"`
	Method     string    `json:"method,omitempty"`
	URL        string    `json:"url,omitempty"`
	Outcome    string    `json:"outcome"`
	Status     int       `json:"status,omitempty"`
	DeniedBy   string    `json:"denied_by,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	DurationMS float64   `json:"duration_ms"`
	Tools      []string  `json:"tools,omitempty"`
	Model      string    `json:"model,omitempty"`
	Tokens     int       `json:"tokens,omitempty"`
}

const (
	stateNew int32 = iota
	stateRunning
	stateStopped
)

// Logger is an audit-log instance, safe for concurrent exchanges.
type Logger struct {
	ring  *Ring // nil when writing elsewhere
	state atomic.Int32

	mu  sync.Mutex // serialises writes: w need not be safe for concurrent use
	w   io.Writer
	buf bytes.Buffer
	now func() time.Time
}

// New makes an instance. w, when not nil, receives the lines instead of
// the configured output.
func New(c Config, w io.Writer) (*Logger, error) {
	if c.Capacity < 0 {
		return nil, fmt.Errorf("%s config: field \"capacity\": %d is negative", Name, c.Capacity)
	}
	p := &Logger{w: w, now: time.Now}
	switch c.Output {
	case "", OutputMemory:
		if p.w == nil {
			capacity := c.Capacity
			if capacity == 0 {
				capacity = DefaultCapacity
			}
			p.ring = NewRing(capacity)
			p.w = p.ring
		}
	case OutputStderr:
		if p.w == nil {
			p.w = os.Stderr
		}
	default:
		return nil, fmt.Errorf("%s config: field \"output\": %q is not one of memory, stderr", Name, c.Output)
	}
	return p, nil
}

var (
	_ gateway.Initializer = (*Logger)(nil)
	_ gateway.Shutdowner  = (*Logger)(nil)
	_ gateway.Readier     = (*Logger)(nil)
	_ gateway.Finisher    = (*Logger)(nil)
)

// Name returns "audit-log".
func (*Logger) Name() string { return Name }

// Capabilities: none beyond the description; the plugin reads no bodies.
func (*Logger) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: Description, Extensions: []gateway.ExtensionSpec{
		{Key: mcpparser.Key, Reads: true, Optional: true, Description: "the MCP method and tool, when present"},
		{Key: inferenceparser.Key, Reads: true, Optional: true, Description: "the model and token usage, when present"},
	}}
}

// Init starts recording. It may be called once (P12).
func (p *Logger) Init(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: init: %w", Name, err)
	}
	if !p.state.CompareAndSwap(stateNew, stateRunning) {
		return fmt.Errorf("%s: init called twice or after shutdown", Name)
	}
	return nil
}

// Ready reports nil only between Init and Shutdown (P14); it is cheap and
// safe for concurrent use.
func (p *Logger) Ready(context.Context) error {
	switch p.state.Load() {
	case stateNew:
		return errors.New("audit-log: not initialised yet")
	case stateStopped:
		return errors.New("audit-log: shut down")
	}
	return nil
}

// Shutdown stops recording; later exchanges are not recorded (P13).
func (p *Logger) Shutdown(ctx context.Context) error {
	p.state.Store(stateStopped)
	// Wait for a write in progress, but not past the host's deadline.
	done := make(chan struct{})
	go func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: shutdown: a write is still in progress: %w", Name, ctx.Err())
	}
}

// OnRequest does nothing.
func (*Logger) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// OnResponse does nothing.
func (*Logger) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// OnFinish writes the exchange's audit line.
func (p *Logger) OnFinish(_ context.Context, ex *gateway.Exchange) error {
	if p.state.Load() != stateRunning {
		return fmt.Errorf("%s: not running (Init not called, or after Shutdown); exchange not recorded", Name)
	}
	o, ok := ex.Outcome()
	if !ok {
		return fmt.Errorf("%s: no outcome during OnFinish; exchange not recorded", Name)
	}
	rec := Record{
		Time:       p.now().UTC(),
		Direction:  ex.Direction.String(),
		Method:     ex.Request.Method,
		URL:        redact.URL(ex.Request.URL),
		Outcome:    o.Kind.String(),
		Status:     o.Status,
		DeniedBy:   o.DeniedBy,
		Reason:     redact.String(o.Reason),
		DurationMS: float64(o.Duration.Microseconds()) / 1000,
	}
	if m, ok := mcpparser.FromExchange(ex); ok {
		for _, c := range m.ToolCalls() {
			rec.Tools = append(rec.Tools, c.Name)
		}
	}
	if inf, ok := inferenceparser.FromExchange(ex); ok {
		rec.Model = inf.Model
		if rec.Model == "" && inf.Request != nil {
			rec.Model = inf.Request.Model
		}
		if inf.Usage != nil {
			rec.Tokens = inf.Usage.TotalTokens
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Reset()
	if err := json.NewEncoder(&p.buf).Encode(rec); err != nil {
		return fmt.Errorf("%s: encode audit line: %w", Name, err)
	}
	if _, err := p.w.Write(p.buf.Bytes()); err != nil {
		return fmt.Errorf("%s: write audit line: %w", Name, err)
	}
	return nil
}

// Lines returns the lines the in-memory ring holds, oldest first; nil when
// the plugin writes elsewhere.
func (p *Logger) Lines() []string {
	if p.ring == nil {
		return nil
	}
	return p.ring.Lines()
}

// Ring is a bounded in-memory io.Writer that keeps the last lines written.
// Each line ends with a newline; a Write may hold several. It is safe for
// concurrent use.
type Ring struct {
	mu      sync.Mutex
	lines   []string
	next    int
	full    bool
	partial []byte
	dropped int
}

// NewRing makes a ring of capacity lines (at least 1).
func NewRing(capacity int) *Ring { return &Ring{lines: make([]string, max(capacity, 1))} }

// Write stores each complete line of b; an unterminated tail waits for the
// next Write.
func (r *Ring) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			r.partial = append(r.partial, b...)
			break
		}
		line := string(r.partial) + string(b[:i])
		r.partial = r.partial[:0]
		b = b[i+1:]
		if r.full {
			r.dropped++
		}
		r.lines[r.next] = line
		r.next = (r.next + 1) % len(r.lines)
		r.full = r.full || r.next == 0
	}
	return n, nil
}

// Lines returns the kept lines, oldest first, without their newlines.
func (r *Ring) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]string(nil), r.lines[:r.next]...)
	}
	return append(append([]string(nil), r.lines[r.next:]...), r.lines[:r.next]...)
}

// Dropped returns how many lines were pushed out by newer ones.
func (r *Ring) Dropped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

// Plugin bundles the factory for the catalog and for serving as a binary.
func Plugin() sdk.Plugin {
	f := Factory()
	return sdk.Plugin{Name: Name, Description: Description, Pipeline: &f}
}
