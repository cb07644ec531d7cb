package tui

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/chunks"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/sse"
)

// Exchange is one recorded exchange the Trace tab can dry-run: a request
// and the upstream's response, whole (Body) or as the chunks it arrived in.
//
// It is the seam to internal/replay: abctl's ui command turns each fixture
// of --fixtures into an Exchange, so this package reads no fixture files.
type Exchange struct {
	Name string
	// Note is a one-line description shown in the fixture list.
	Note string
	// Direction is inbound or outbound; empty means outbound.
	Direction string
	Request   pipeline.Request
	Status    int
	Header    http.Header
	Body      []byte
	Chunks    [][]byte
}

func (x *Exchange) direction() gateway.Direction {
	if x.Direction == gateway.Inbound.String() {
		return gateway.Inbound
	}
	return gateway.Outbound
}

func (x *Exchange) body() []byte {
	if len(x.Chunks) == 0 {
		return x.Body
	}
	var out []byte
	for _, c := range x.Chunks {
		out = append(out, c...)
	}
	return out
}

// Run is one dry-run: the trace of every hook call, the frames the
// response was cut into, and the bodies before and after the chain.
type Run struct {
	Fixture string
	Events  []trace.Event
	// Frames are the raw bytes of each SSE frame, indexed like
	// Event.Frame; nil for a buffered response (its one frame call saw the
	// whole body).
	Frames                [][]byte
	ReqBefore, ReqAfter   []byte
	RespBefore, RespAfter []byte
	Outcome               gateway.Outcome
	Status                int
	Warnings              []string
	Duration              time.Duration
}

// DryRun builds the chain file's chain for the exchange's direction from
// factories, runs the exchange through it with the real runtime
// (internal/pipeline) and returns the trace. Plugins without a factory
// (described from binaries, files or gateways) make the build fail with
// the runtime's own error.
func DryRun(ctx context.Context, cf *catalog.ChainFile, factories []gateway.Factory, x Exchange) (*Run, error) {
	if cf == nil {
		return nil, fmt.Errorf("no chain loaded: start abctl ui with --chain FILE")
	}
	dir := x.direction()
	spec, err := replay.Spec(cf, dir)
	if err != nil {
		return nil, fmt.Errorf("fixture %q is %s: %w", x.Name, dir, err)
	}
	rec := trace.NewRecorder()
	ch, err := pipeline.Build(spec, factories, pipeline.Options{})
	if err != nil {
		return nil, fmt.Errorf("build the %s chain: %w", dir, err)
	}
	if err := ch.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the %s chain: %w", dir, err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = ch.Stop(sctx)
	}()
	up := pipeline.Upstream{Status: x.Status, Header: x.Header.Clone(), Body: x.Body}
	if up.Status == 0 {
		up.Status = http.StatusOK
	}
	if len(x.Chunks) > 0 {
		up.Body, up.Stream = nil, chunks.New(x.Chunks)
	}
	req := x.Request
	req.Header = req.Header.Clone()
	req.Body = append([]byte(nil), req.Body...)
	client := &pipeline.BufferClient{}
	t0 := time.Now()
	res := ch.Run(ctx, req, up, pipeline.ExchangeOptions{Trace: rec, Client: client})
	r := &Run{
		Fixture: x.Name, Events: rec.Events(),
		ReqBefore: x.Request.Body, ReqAfter: res.RequestBody,
		RespBefore: x.body(), RespAfter: client.Body.Bytes(),
		Outcome: res.Outcome, Status: res.Status, Duration: time.Since(t0),
	}
	if res.Streamed {
		r.Frames = frames(x)
	}
	for _, w := range res.Warnings {
		r.Warnings = append(r.Warnings, w.String())
	}
	if res.Err != nil {
		r.Warnings = append(r.Warnings, res.Err.Error())
	}
	return r, nil
}

// frames cuts the response into SSE frames with the runtime's own framer,
// so frame i here is the frame the trace's frame=i calls saw.
func frames(x Exchange) [][]byte {
	var f sse.Framer
	var out [][]byte
	emit := func(raw []byte, isFrame bool) error {
		if isFrame {
			out = append(out, append([]byte(nil), raw...))
		}
		return nil
	}
	chunks := x.Chunks
	if len(chunks) == 0 {
		chunks = [][]byte{x.Body}
	}
	for _, c := range chunks {
		_ = f.Feed(c, emit)
	}
	_, _ = f.End(emit)
	return out
}

// FromFixture returns the Exchange of a recorded fixture
// (internal/replay/fixture), named name.
func FromFixture(name string, f *fixture.Fixture) Exchange {
	x := Exchange{
		Name: name, Direction: f.Direction,
		Request: pipeline.RequestTo(f.Request.Method, f.Request.URL, f.Request.Header, f.Request.Body),
		Status:  f.Response.Status, Header: f.Response.Header, Body: f.Response.Body,
	}
	for _, c := range f.Response.Chunks {
		x.Chunks = append(x.Chunks, c.Data)
	}
	kind := "buffered"
	if len(x.Chunks) > 0 {
		kind = fmt.Sprintf("streamed, %d chunks", len(x.Chunks))
	}
	x.Note = fmt.Sprintf("%s %s → %d, %s", f.Request.Method, f.Request.URL, f.Response.Status, kind)
	if f.Source != "" {
		x.Note += " (" + f.Source + ")"
	}
	return x
}
