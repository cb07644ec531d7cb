package pipeline

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/abkit/abkit/sdk/gateway"
)

// call is what a fake plugin observed in one hook call.
type call struct {
	seq         int
	plugin      string
	hook        string
	frame       string // a copy of the frame bytes
	frameNil    bool
	last        bool
	ctxErr      error
	hasDeadline bool
	deadline    time.Time
	outcome     gateway.Outcome
	hasOutcome  bool
	state       string
	hasState    bool
	reqBody     []byte
	reqBodyNil  bool
	respBody    []byte
	respBodyNil bool
}

// recLog records calls of every fake in a test, numbered in call order.
type recLog struct {
	mu    sync.Mutex
	calls []call
}

func (l *recLog) add(c call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.seq = len(l.calls) + 1
	l.calls = append(l.calls, c)
}

func (l *recLog) all() []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]call(nil), l.calls...)
}

// seq returns "plugin.hook" for each call, optionally filtered by hook.
func (l *recLog) seq(hooks ...string) []string {
	var out []string
	for _, c := range l.all() {
		if len(hooks) > 0 && !contains(hooks, c.hook) {
			continue
		}
		out = append(out, c.plugin+"."+c.hook)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// stateKey is the per-exchange state key fakes use (P31).
var stateKey = gateway.NewKey[string]("fake-state")

// fake is a scriptable, recording test plugin. Which optional behaviours it
// has is decided by the wrapper type plugin() returns.
type fake struct {
	name string
	caps gateway.Capabilities
	log  *recLog

	stream, finish, life bool

	req      func(ctx context.Context, ex *gateway.Exchange) gateway.Action
	resp     func(ctx context.Context, ex *gateway.Exchange) gateway.Action
	frame    func(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action
	fin      func(ctx context.Context, ex *gateway.Exchange) error
	init     func(ctx context.Context) error
	shutdown func(ctx context.Context) error
	ready    func(ctx context.Context) error
}

func (f *fake) observe(hook string, ctx context.Context, ex *gateway.Exchange) call {
	c := call{plugin: f.name, hook: hook}
	if ctx != nil {
		c.ctxErr = ctx.Err()
		c.deadline, c.hasDeadline = ctx.Deadline()
	}
	if ex != nil {
		c.outcome, c.hasOutcome = ex.Outcome()
		c.state, c.hasState = gateway.GetState(ex, stateKey)
		c.reqBody, c.reqBodyNil = append([]byte(nil), ex.RequestBody()...), ex.RequestBody() == nil
		c.respBody, c.respBodyNil = append([]byte(nil), ex.ResponseBody()...), ex.ResponseBody() == nil
	}
	return c
}

func (f *fake) Name() string                       { return f.name }
func (f *fake) Capabilities() gateway.Capabilities { return f.caps }
func (f *fake) OnRequest(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	f.log.add(f.observe("on_request", ctx, ex))
	if f.req != nil {
		return f.req(ctx, ex)
	}
	return gateway.Continue()
}
func (f *fake) OnResponse(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	f.log.add(f.observe("on_response", ctx, ex))
	if f.resp != nil {
		return f.resp(ctx, ex)
	}
	return gateway.Continue()
}
func (f *fake) onFrame(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	c := f.observe("on_response_frame", ctx, ex)
	c.frame, c.frameNil, c.last = string(frame), frame == nil, last
	f.log.add(c)
	if f.frame != nil {
		return f.frame(ctx, ex, frame, last)
	}
	return gateway.Continue()
}
func (f *fake) onFinish(ctx context.Context, ex *gateway.Exchange) error {
	f.log.add(f.observe("on_finish", ctx, ex))
	if f.fin != nil {
		return f.fin(ctx, ex)
	}
	return nil
}
func (f *fake) Init(ctx context.Context) error {
	f.log.add(f.observe("init", ctx, nil))
	if f.init != nil {
		return f.init(ctx)
	}
	return nil
}
func (f *fake) Shutdown(ctx context.Context) error {
	f.log.add(f.observe("shutdown", ctx, nil))
	if f.shutdown != nil {
		return f.shutdown(ctx)
	}
	return nil
}
func (f *fake) Ready(ctx context.Context) error {
	if f.ready != nil {
		return f.ready(ctx)
	}
	return nil
}

type (
	pStream    struct{ *fake }
	pFin       struct{ *fake }
	pStreamFin struct{ *fake }
	pLife      struct{ *fake }
	pLifeFin   struct{ *fake }
)

func (p pStream) OnResponseFrame(ctx context.Context, ex *gateway.Exchange, fr []byte, last bool) gateway.Action {
	return p.onFrame(ctx, ex, fr, last)
}
func (p pStreamFin) OnResponseFrame(ctx context.Context, ex *gateway.Exchange, fr []byte, last bool) gateway.Action {
	return p.onFrame(ctx, ex, fr, last)
}
func (p pFin) OnFinish(ctx context.Context, ex *gateway.Exchange) error { return p.onFinish(ctx, ex) }
func (p pStreamFin) OnFinish(ctx context.Context, ex *gateway.Exchange) error {
	return p.onFinish(ctx, ex)
}
func (p pLifeFin) OnFinish(ctx context.Context, ex *gateway.Exchange) error {
	return p.onFinish(ctx, ex)
}

// pBase and friends hide Init/Shutdown/Ready: only the life variants have
// them.
type plainPlugin interface {
	Name() string
	Capabilities() gateway.Capabilities
	OnRequest(ctx context.Context, ex *gateway.Exchange) gateway.Action
	OnResponse(ctx context.Context, ex *gateway.Exchange) gateway.Action
}

type hide struct{ plainPlugin }

type hideStream struct {
	plainPlugin
	s gateway.StreamingResponder
}

func (h hideStream) OnResponseFrame(ctx context.Context, ex *gateway.Exchange, fr []byte, last bool) gateway.Action {
	return h.s.OnResponseFrame(ctx, ex, fr, last)
}

type hideFin struct {
	plainPlugin
	f gateway.Finisher
}

func (h hideFin) OnFinish(ctx context.Context, ex *gateway.Exchange) error {
	return h.f.OnFinish(ctx, ex)
}

type hideStreamFin struct {
	plainPlugin
	s gateway.StreamingResponder
	f gateway.Finisher
}

func (h hideStreamFin) OnResponseFrame(ctx context.Context, ex *gateway.Exchange, fr []byte, last bool) gateway.Action {
	return h.s.OnResponseFrame(ctx, ex, fr, last)
}
func (h hideStreamFin) OnFinish(ctx context.Context, ex *gateway.Exchange) error {
	return h.f.OnFinish(ctx, ex)
}

// plugin returns f as a plugin with exactly the optional behaviours its
// flags ask for.
func (f *fake) plugin() gateway.Plugin {
	switch {
	case f.life && f.finish:
		return pLifeFin{f}
	case f.life:
		return pLife{f}
	case f.stream && f.finish:
		return hideStreamFin{plainPlugin: f, s: pStream{f}, f: pFin{f}}
	case f.stream:
		return hideStream{plainPlugin: f, s: pStream{f}}
	case f.finish:
		return hideFin{plainPlugin: f, f: pFin{f}}
	}
	return hide{f}
}

func (f *fake) factory() gateway.Factory {
	return gateway.Factory{Name: f.name, New: func(json.RawMessage) (gateway.Plugin, error) { return f.plugin(), nil }}
}

// fakes builds a chain of the given fakes (all enforce) in proxy mode.
func buildFakes(t interface {
	Helper()
	Fatalf(string, ...any)
}, opts Options, fs ...*fake) *Chain {
	t.Helper()
	spec := Spec{}
	var facs []gateway.Factory
	for _, f := range fs {
		if f.caps.Description == "" {
			f.caps.Description = "test plugin " + f.name
		}
		spec.Entries = append(spec.Entries, Entry{Plugin: f.name})
		facs = append(facs, f.factory())
	}
	c, err := Build(spec, facs, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return c
}

// chunks is a Stream over fixed chunks, ending with err (io.EOF if nil).
type chunks struct {
	parts [][]byte
	i     int
	err   error
}

func (s *chunks) Next(ctx context.Context) ([]byte, error) {
	if s.i < len(s.parts) {
		s.i++
		return s.parts[s.i-1], nil
	}
	if s.err != nil {
		return nil, s.err
	}
	return nil, io.EOF
}

func sseHeader() http.Header { return http.Header{"Content-Type": {"text/event-stream"}} }

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }
