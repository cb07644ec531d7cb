package refruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/gateway"
)

// Exchange-scoped values the harness keeps on each gateway exchange.
var (
	exIndexKey = gateway.NewKey[uint32]("refruntime.exchange")
	reqCtxKey  = gateway.NewKey[context.Context]("refruntime.request-ctx")
	deferKey   = gateway.NewKey[*[]func()]("refruntime.deferred")
	// frameDeferKey holds frame calls a frame-order bug holds back.
	frameDeferKey = gateway.NewKey[*[]func()]("refruntime.deferred-frames")
	// deniedKey names the plugin whose OnRequest denied (for a bug).
	deniedKey = gateway.NewKey[string]("refruntime.denied-by")
)

type cancelKey struct{}

// probePlugin is one pipeline instance backed by a probe.
type probePlugin struct {
	id    uint32
	name  string
	caps  gateway.Capabilities
	c     abkitv1.ProbeClient
	bug   Bug
	state gateway.Key[string]
	// lastInFrame: the plugin is the first streamer in declaration order,
	// so the last to get each frame (for the frame-order bugs).
	lastInFrame bool

	mu     sync.Mutex
	frames map[uint32]int // frames seen per exchange (for a bug)
}

func (p *probePlugin) Name() string                       { return p.name }
func (p *probePlugin) Capabilities() gateway.Capabilities { return p.caps }

func outcomeProto(o gateway.Outcome) *abkitv1.Outcome {
	return &abkitv1.Outcome{Kind: o.Kind.String(), Status: int32(o.Status), DeniedBy: o.DeniedBy, Reason: o.Reason, DurationNs: int64(o.Duration)}
}

func (p *probePlugin) hook(ctx context.Context, ex *gateway.Exchange, hook string, frame []byte, last bool) *abkitv1.ProbeReply {
	pc := &abkitv1.ProbeCall{Probe: p.id, Hook: hook, Frame: frame, Last: last}
	if ex != nil {
		pc.Exchange, _ = gateway.GetState(ex, exIndexKey)
		if o, ok := ex.Outcome(); ok {
			pc.HasOutcome, pc.Outcome = true, outcomeProto(o)
		}
		pc.State, pc.HasState = gateway.GetState(ex, p.state)
		if b := ex.RequestBody(); b != nil {
			pc.HasRequestBody, pc.RequestBody = true, b
		}
		if b := ex.ResponseBody(); b != nil {
			pc.HasResponseBody, pc.ResponseBody = true, b
		}
		rq := &ex.Request
		pc.Request = &abkitv1.HTTPRequest{Method: rq.Method, Url: rq.URL, Header: abkitv1.HeaderToProto(rq.Header),
			Scheme: rq.Scheme, Host: rq.Host, Path: rq.Path, RawQuery: rq.RawQuery, RemoteAddr: rq.RemoteAddr}
		if ex.Response.Status != 0 {
			pc.HasResponse, pc.ResponseHeader = true, abkitv1.HeaderToProto(ex.Response.Header)
		}
		if id, ok := ex.Identity(); ok {
			pc.IdentityJson, _ = json.Marshal(id)
		}
	}
	r := call(ctx, p.c, pc)
	if ex != nil {
		if d := r.GetRequestHeader(); !d.Empty() {
			d.Apply(ex.Request.Header)
		}
		if d := r.GetResponseHeader(); !d.Empty() && ex.Response.Header != nil {
			d.Apply(ex.Response.Header)
		}
		if b := r.GetSetIdentityJson(); len(b) > 0 {
			var id gateway.Identity
			if json.Unmarshal(b, &id) == nil {
				ex.SetIdentity(id)
			}
		}
		if r.GetSetState() {
			gateway.SetState(ex, p.state, r.GetState())
		}
		if r.GetWriteRequestBody() {
			ex.SetRequestBody(r.GetBody())
		}
		if r.GetWriteResponseBody() {
			ex.SetResponseBody(r.GetBody())
		}
	}
	if r.GetCancelClient() {
		if cancel, ok := ctx.Value(cancelKey{}).(context.CancelFunc); ok {
			cancel()
		}
	}
	sleep(r)
	if r.GetPanic() {
		panic(fmt.Sprintf("probe %s panicked in %s", p.name, hook))
	}
	return r
}

func action(r *abkitv1.ProbeReply) gateway.Action {
	return r.GetAction().Gateway()
}

func replyErr(r *abkitv1.ProbeReply) error {
	if e := r.GetError(); e != "" {
		return errors.New(e)
	}
	return nil
}

func (p *probePlugin) OnRequest(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	a := action(p.hook(ctx, ex, "request", nil, false))
	if p.bug == "denier-not-finished" && !a.IsContinue() {
		gateway.SetState(ex, deniedKey, p.name)
	}
	return a
}

func (p *probePlugin) OnResponse(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	if p.bug == "response-forward" {
		// Bug (P16): answer continue now and make the call later, after the
		// pipeline's reverse walk, in the reverse of that order.
		if d, ok := gateway.GetState(ex, deferKey); ok {
			*d = append(*d, func() { p.hook(ctx, ex, "response", nil, false) })
			return gateway.Continue()
		}
	}
	return action(p.hook(ctx, ex, "response", nil, false))
}

func (p *probePlugin) finish(ctx context.Context, ex *gateway.Exchange) error {
	switch p.bug {
	case "finish-ctx-from-req":
		// Bug (P28): the finish context derives from the request's.
		if rc, ok := gateway.GetState(ex, reqCtxKey); ok {
			c, cancel := context.WithTimeout(rc, 2*time.Second)
			defer cancel()
			ctx = c
		}
	case "denier-not-finished":
		if d, _ := gateway.GetState(ex, deniedKey); d == p.name {
			return nil // Bug (P26): the denier is not finished.
		}
	case "fifo-finish":
		// Bug (P27): finishers run in declaration order.
		if d, ok := gateway.GetState(ex, deferKey); ok {
			*d = append(*d, func() { p.hook(ctx, ex, "finish", nil, false) })
			return nil
		}
	}
	return replyErr(p.hook(ctx, ex, "finish", nil, false))
}

func (p *probePlugin) frame(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	idx, _ := gateway.GetState(ex, exIndexKey)
	p.mu.Lock()
	seen := p.frames[idx]
	if !last {
		p.frames[idx]++
	}
	p.mu.Unlock()
	if p.bug == "no-last-on-empty" && last && seen == 0 && len(frame) == 0 {
		return gateway.Continue() // Bug (P21): no closing call for an empty stream.
	}
	if p.bug == "last-twice" && last {
		p.hook(ctx, ex, "frame", frame, last) // Bug (P21): a second last=true call.
	}
	if d, ok := gateway.GetState(ex, frameDeferKey); ok {
		switch p.bug {
		case "frames-declaration-order":
			// Bug (P20): each frame goes to the streamers in declaration
			// order. The pipeline calls them in reverse, so every call but
			// the last one of the frame is held back and replayed after it,
			// in reverse; the held-back calls' actions are lost.
			if !p.lastInFrame {
				f := bytes.Clone(frame)
				*d = append(*d, func() { p.hook(ctx, ex, "frame", f, last) })
				return gateway.Continue()
			}
			a := action(p.hook(ctx, ex, "frame", frame, last))
			replay(d)
			return a
		case "frame-overtakes":
			// Bug (P20): the last streamer of each frame gets it only after
			// the next frame went to the others (each plugin still sees the
			// frames in wire order).
			if p.lastInFrame {
				fs := *d
				*d = nil
				for _, f := range fs {
					f()
				}
				if !last {
					f := bytes.Clone(frame)
					*d = append(*d, func() { p.hook(ctx, ex, "frame", f, false) })
					return gateway.Continue()
				}
			}
		}
	}
	a := action(p.hook(ctx, ex, "frame", frame, last))
	if p.bug == "response-for-streamers" && last {
		p.hook(ctx, ex, "response", nil, false) // Bug (P23).
	}
	return a
}

// Behaviour mixins: the pipeline sees exactly the declared behaviours.
type finM struct{ p *probePlugin }

func (m finM) OnFinish(ctx context.Context, ex *gateway.Exchange) error { return m.p.finish(ctx, ex) }

type strM struct{ p *probePlugin }

func (m strM) OnResponseFrame(ctx context.Context, ex *gateway.Exchange, f []byte, last bool) gateway.Action {
	return m.p.frame(ctx, ex, f, last)
}

type lcM struct{ p *probePlugin }

func (m lcM) Init(ctx context.Context) error {
	return replyErr(m.p.hook(ctx, nil, "init", nil, false))
}
func (m lcM) Shutdown(ctx context.Context) error {
	return replyErr(m.p.hook(ctx, nil, "shutdown", nil, false))
}
func (m lcM) Ready(ctx context.Context) error {
	return replyErr(m.p.hook(ctx, nil, "ready", nil, false))
}

// wrap returns p with the declared behaviours. The lifecycle behaviours
// (init, shutdown, ready) come as a group: any of them declares all three.
func wrap(p *probePlugin, behaviours []string) gateway.Plugin {
	has := map[string]bool{}
	for _, b := range behaviours {
		has[b] = true
	}
	fin, str, lc := finM{p}, strM{p}, lcM{p}
	l := has["init"] || has["shutdown"] || has["ready"]
	switch {
	case has["finish"] && has["stream"] && l:
		return &struct {
			*probePlugin
			finM
			strM
			lcM
		}{p, fin, str, lc}
	case has["finish"] && has["stream"]:
		return &struct {
			*probePlugin
			finM
			strM
		}{p, fin, str}
	case has["finish"] && l:
		return &struct {
			*probePlugin
			finM
			lcM
		}{p, fin, lc}
	case has["stream"] && l:
		return &struct {
			*probePlugin
			strM
			lcM
		}{p, str, lc}
	case has["finish"]:
		return &struct {
			*probePlugin
			finM
		}{p, fin}
	case has["stream"]:
		return &struct {
			*probePlugin
			strM
		}{p, str}
	case l:
		return &struct {
			*probePlugin
			lcM
		}{p, lc}
	}
	return p
}

func capsFrom(c *abkitv1.Capabilities) gateway.Capabilities {
	return gateway.Capabilities{ReadsBody: c.GetReadsBody(), WritesRequestBody: c.GetWritesRequestBody(),
		WritesResponseBody: c.GetWritesResponseBody(), Requires: c.GetRequires(), RequiresAny: c.GetRequiresAny(),
		Description: c.GetDescription()}
}

// RunPipeline builds the scenario's chain and runs it.
func (s *Server) RunPipeline(ctx context.Context, sc *abkitv1.PipelineScenario) (*abkitv1.PipelineRun, error) {
	pc, err := s.probes(sc.GetBrokerId())
	if err != nil {
		return nil, err
	}
	dir, err := gateway.ParseDirection(sc.GetDirection())
	if err != nil {
		return nil, err
	}
	var factories []gateway.Factory
	seenReq, seenResp := false, false
	// The first streamer in declaration order gets each frame last.
	streams := map[string]bool{}
	for _, ps := range sc.GetPlugins() {
		for _, b := range ps.GetBehaviours() {
			if b == "stream" {
				streams[ps.GetName()] = true
			}
		}
	}
	firstStreamer := ""
	for _, e := range sc.GetEntries() {
		if streams[e.GetPlugin()] && e.GetOnError() != "off" {
			firstStreamer = e.GetPlugin()
			break
		}
	}
	for _, ps := range sc.GetPlugins() {
		f := gateway.Factory{Name: ps.GetName()}
		if len(ps.GetConfigSchemaJson()) > 0 {
			var cs gateway.ConfigSchema
			if err := json.Unmarshal(ps.GetConfigSchemaJson(), &cs); err != nil {
				return nil, fmt.Errorf("plugin %q: config schema: %w", ps.GetName(), err)
			}
			f.Config = &cs
		}
		caps := capsFrom(ps.GetCapabilities())
		if s.opts.Bug == "second-writer-accepted" {
			// Bug (P9): a second writer of a direction silently loses its
			// write capability instead of failing the build.
			if caps.WritesRequestBody && seenReq {
				caps.WritesRequestBody = false
			}
			if caps.WritesResponseBody && seenResp {
				caps.WritesResponseBody = false
			}
			seenReq = seenReq || caps.WritesRequestBody
			seenResp = seenResp || caps.WritesResponseBody
		}
		id, name, behaviours := ps.GetProbe(), ps.GetName(), ps.GetBehaviours()
		f.New = func(json.RawMessage) (gateway.Plugin, error) {
			p := &probePlugin{id: id, name: name, caps: caps, c: pc, bug: s.opts.Bug,
				state: gateway.NewKey[string]("probe." + name), frames: map[uint32]int{}, lastInFrame: name == firstStreamer}
			return wrap(p, behaviours), nil
		}
		factories = append(factories, f)
	}
	spec := pipeline.Spec{Direction: dir, Mode: pipeline.Mode(sc.GetMode())}
	named := map[string]bool{}
	for _, e := range sc.GetEntries() {
		if s.opts.Bug == "duplicate-names-accepted" && e.GetPlugin() != "" {
			// Bug (P1): a chain keyed by plugin name; a second entry of a
			// name is silently dropped instead of failing the build.
			if named[e.GetPlugin()] {
				continue
			}
			named[e.GetPlugin()] = true
		}
		spec.Entries = append(spec.Entries, pipeline.Entry{Plugin: e.GetPlugin(), Config: e.GetConfigJson(), OnError: pipeline.OnError(e.GetOnError())})
	}
	run := &abkitv1.PipelineRun{}
	chain, err := pipeline.Build(spec, factories, pipeline.Options{FinishTimeout: time.Duration(sc.GetFinishTimeoutNs())})
	if err != nil {
		var be *pipeline.BuildError
		if !errors.As(err, &be) {
			return nil, err
		}
		errs := be.Errs
		if s.opts.Alt == "fail-fast-build" {
			errs = failFast(errs)
		}
		for _, re := range errs {
			be := &abkitv1.BuildError{Rule: re.Rule, Plugin: re.Plugin, Message: re.Error()}
			if s.opts.Alt == "build-errors-without-rules" {
				be.Rule, be.Message = "", plainBuildMessage(re)
			}
			run.BuildErrors = append(run.BuildErrors, be)
			if s.opts.Bug == "first-build-error-only" {
				break // Bug (P6).
			}
		}
		return run, nil
	}
	if sc.GetStart() {
		if err := chain.Start(ctx); err != nil {
			run.StartError = err.Error()
		}
	}
	if n := int(sc.GetReadyCalls()); n > 0 {
		run.ReadyErrors = make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := chain.Ready(ctx); err != nil {
					run.ReadyErrors[i] = err.Error()
				}
			})
		}
		wg.Wait()
	}
	if run.StartError == "" {
		for i, es := range sc.GetExchanges() {
			run.Exchanges = append(run.Exchanges, s.exchange(ctx, chain, uint32(i), es))
		}
	}
	if sc.GetStop() {
		sctx := ctx
		if n := sc.GetStopTimeoutNs(); n > 0 {
			c, cancel := context.WithTimeout(ctx, time.Duration(n))
			defer cancel()
			sctx = c
		}
		if err := chain.Stop(sctx); err != nil {
			run.StopError = err.Error()
		}
	}
	return run, nil
}

// chunks replays the upstream's chunks, ending early when asked.
type chunks struct {
	list  [][]byte
	early bool
	i     int
}

func (c *chunks) Next(ctx context.Context) ([]byte, error) {
	// A real upstream body read fails once the request context is done
	// (the client went away); the scripted one does the same.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.i < len(c.list) {
		c.i++
		return c.list[c.i-1], nil
	}
	if c.early {
		return nil, errors.New("upstream stream broke (scripted early end)")
	}
	return nil, io.EOF
}

func (s *Server) exchange(ctx context.Context, chain *pipeline.Chain, idx uint32, es *abkitv1.ExchangeSpec) *abkitv1.ExchangeRun {
	rq := es.GetRequest()
	req := pipeline.Request{Method: rq.GetMethod(), URL: rq.GetUrl(), Scheme: rq.GetScheme(), Host: rq.GetHost(), Path: rq.GetPath(),
		RawQuery: rq.GetRawQuery(), RemoteAddr: rq.GetRemoteAddr(), Header: abkitv1.HeaderFromProto(rq.GetHeader())}
	if rq.GetHasBody() {
		req.Body = rq.GetBody()
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rctx = context.WithValue(rctx, cancelKey{}, context.CancelFunc(cancel))
	if es.GetCancelled() {
		cancel()
	}
	client := &pipeline.BufferClient{}
	orig := req.Header.Clone() // the exchange takes req.Header
	e := chain.NewExchange(req, pipeline.ExchangeOptions{Client: client})
	gx := e.Gateway()
	gateway.SetState(gx, exIndexKey, idx)
	gateway.SetState(gx, reqCtxKey, context.Context(rctx))
	var deferred, deferredFrames []func()
	gateway.SetState(gx, deferKey, &deferred)
	gateway.SetState(gx, frameDeferKey, &deferredFrames)
	if s.opts.Bug == "identity-leaks" {
		// Bug (P36): the runtime keeps the last exchange's identity.
		s.mu.Lock()
		if s.lastID != nil {
			gx.SetIdentity(*s.lastID)
		}
		s.mu.Unlock()
		defer func() {
			if id, ok := gx.Identity(); ok {
				s.mu.Lock()
				s.lastID = &id
				s.mu.Unlock()
			}
		}()
	}
	var upHeader http.Header
	if e.Request(rctx) {
		upHeader = gx.Request.Header.Clone()
		if s.opts.Bug == "header-changes-lost" {
			// Bug (P32): the upstream gets the request as the client sent it.
			upHeader = orig
		}
		u := es.GetUpstream()
		up := pipeline.Upstream{Status: int(u.GetStatus()), Header: abkitv1.HeaderFromProto(u.GetHeader()), Body: u.GetBody()}
		if u.GetError() != "" {
			up.Err = errors.New(u.GetError())
		} else if len(u.GetChunks()) > 0 || u.GetEarlyEnd() {
			up.Body = nil
			up.Stream = &chunks{list: u.GetChunks(), early: u.GetEarlyEnd()}
		}
		if up.Header == nil {
			up.Header = http.Header{}
		}
		e.Respond(rctx, up)
	}
	if s.opts.Bug == "response-forward" {
		replay(&deferred)
	}
	res := e.Finish()
	if s.opts.Bug == "fifo-finish" {
		replay(&deferred)
	}
	if es.GetFinishTwice() {
		res = e.Finish()
	}
	out := &abkitv1.ExchangeRun{Outcome: outcomeProto(res.Outcome), Status: int32(client.Status), Body: client.Body.Bytes(),
		Streamed: res.Streamed, Frames: int32(res.Frames), RequestBody: res.RequestBody,
		Cancelled: errors.Is(res.Err, pipeline.ErrCanceled), Header: abkitv1.HeaderToProto(client.Header),
		UpstreamCalled: upHeader != nil, UpstreamHeader: abkitv1.HeaderToProto(upHeader)}
	if res.Err != nil {
		out.Error = res.Err.Error()
	}
	for _, w := range res.Warnings {
		out.Warnings = append(out.Warnings, &abkitv1.RuntimeWarning{Rule: w.Rule, Plugin: w.Plugin, Message: w.String()})
	}
	return out
}

// replay runs deferred calls in the reverse of the order they were made.
func replay(d *[]func()) {
	fs := *d
	*d = nil
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
