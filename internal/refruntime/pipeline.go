package refruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/sse"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/runtimekit"
)

// Exchange-scoped values the harness keeps on each gateway exchange.
var (
	reqCtxKey = gateway.NewKey[context.Context]("refruntime.request-ctx")
	// clientKey holds the exchange's client, for the frames-relayed-first
	// alternative.
	clientKey = gateway.NewKey[*runtimekit.Client]("refruntime.client")
	deferKey  = gateway.NewKey[*[]func()]("refruntime.deferred")
	// frameDeferKey holds frame calls a frame-order bug holds back.
	frameDeferKey = gateway.NewKey[*[]func()]("refruntime.deferred-frames")
	// deniedKey names the plugin whose OnRequest denied (for a bug).
	deniedKey = gateway.NewKey[string]("refruntime.denied-by")
)

// probePlugin is one pipeline instance backed by a probe: the kit's probe
// plugin, with the bugs injected around its calls.
type probePlugin struct {
	*runtimekit.ProbePlugin
	name string
	bug  Bug
	alt  Alt
	// lastInFrame: the plugin is the first streamer in declaration order,
	// so the last to get each frame (for the frame-order bugs).
	lastInFrame bool

	mu     sync.Mutex
	frames map[uint32]int // frames seen per exchange (for a bug)
}

func (p *probePlugin) hook(ctx context.Context, ex *gateway.Exchange, hook string, frame []byte, last bool) *runtimekit.Reply {
	return p.Call(ctx, ex, hook, frame, last)
}

var action = runtimekit.Action

func replyErr(r *runtimekit.Reply) error { return r.Err() }

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
	a := p.dispatchFrame(ctx, ex, frame, last)
	if p.alt == "frames-relayed-first" && !a.IsContinue() && len(frame) > 0 {
		// Alternative (P25): each frame was relayed before it was
		// dispatched, so the client has the frame a plugin rejects; the
		// frames before it are relayed already.
		if c, ok := gateway.GetState(ex, clientKey); ok {
			_, _ = c.Write(frame)
		}
	}
	return a
}

func (p *probePlugin) dispatchFrame(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	if p.alt == "data-payload-frames" && len(frame) > 0 && strings.HasPrefix(strings.ToLower(ex.Response.Header.Get("Content-Type")), "text/event-stream") {
		// Alternative (P19.frame): a plugin gets the event's data lines
		// joined by LF, as AuthBridge's sseframe reader hands them.
		frame = []byte(sse.Parse(frame).Data)
	}
	idx := runtimekit.ExchangeIndex(ex)
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

// wrap returns p with the declared behaviours (the kit's, with the bugs'
// finish and frame calls).
func wrap(p *probePlugin) gateway.Plugin {
	o := p.Optional()
	if o.Finish != nil {
		o.Finish = p.finish
	}
	if o.Frame != nil {
		o.Frame = p.frame
	}
	return gateway.Compose(p, o)
}

// runPipeline builds the scenario's chain and runs it.
func (s *Server) runPipeline(ctx context.Context, sc runtimekit.PipelineScenario) (*abkitv1.PipelineRun, error) {
	dir, err := gateway.ParseDirection(sc.GetDirection())
	if err != nil {
		return nil, err
	}
	var factories []gateway.Factory
	seenReq, seenResp := false, false
	// The first streamer in declaration order gets each frame last.
	firstStreamer := ""
	for _, e := range sc.GetEntries() {
		if ps := sc.Plugin(e.GetPlugin()); ps != nil && runtimekit.Has(ps, "stream") && e.GetOnError() != "off" {
			firstStreamer = e.GetPlugin()
			break
		}
	}
	for _, ps := range sc.GetPlugins() {
		f, err := runtimekit.Factory(sc.Probes, ps)
		if err != nil {
			return nil, err
		}
		caps := runtimekit.Capabilities(ps.GetCapabilities())
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
		f.New = func(json.RawMessage) (gateway.Plugin, error) {
			kp := runtimekit.NewProbePlugin(sc.Probes, ps)
			kp.SetCapabilities(caps)
			p := &probePlugin{ProbePlugin: kp, name: ps.GetName(), bug: s.opts.Bug, alt: s.opts.Alt, frames: map[uint32]int{}, lastInFrame: ps.GetName() == firstStreamer}
			return wrap(p), nil
		}
		factories = append(factories, f)
	}
	spec := pipeline.Spec{Direction: dir, Mode: pipeline.Mode(sc.GetMode()),
		RepeatedNames: s.opts.Alt == "repeated-names"} // Alternative (P1).
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
	chain, err := pipeline.Build(spec, factories, pipeline.Options{FinishTimeout: time.Duration(sc.GetFinishTimeoutNs()),
		FramesAfterWalk:      s.opts.Alt == "frames-after-walk",       // Alternative (P22).
		KeepUndeclaredWrites: s.opts.Alt == "keep-undeclared-writes"}) // Alternative (P17).
	if err != nil {
		var be *pipeline.BuildError
		if !errors.As(err, &be) {
			return nil, err
		}
		errs := be.Errs
		if s.opts.Alt == "fail-fast-build" {
			errs = failFast(errs)
		}
		run := &abkitv1.PipelineRun{}
		for _, re := range errs {
			be := runtimekit.BuildError(re.Rule, re.Plugin, re.Error())
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
	start, ready, stop := chain.Start, chain.Ready, chain.Stop
	switch s.opts.Alt {
	case "stop-started-on-failure":
		// Alternative (P12): a failed Start shuts the started plugins
		// down itself, and Stop does not repeat it.
		var stopped bool
		start = func(ctx context.Context) error {
			err := chain.Start(ctx)
			if err != nil {
				stopped = true
				_ = chain.Stop(ctx)
			}
			return err
		}
		stop = func(ctx context.Context) error {
			if stopped {
				return nil
			}
			return chain.Stop(ctx)
		}
	case "ready-names-first":
		// Alternative (P14): the first plugin not ready is named.
		ready = func(ctx context.Context) error {
			if errs := runtimekit.Errors(chain.Ready(ctx)); len(errs) > 0 {
				return errs[0]
			}
			return nil
		}
	}
	return sc.Run(ctx, runtimekit.Chain{Start: start, Ready: ready, Stop: stop,
		Exchange: func(ctx context.Context, idx uint32, es *abkitv1.ExchangeSpec) *abkitv1.ExchangeRun {
			return s.exchange(ctx, chain, idx, es)
		}}), nil
}

func (s *Server) exchange(ctx context.Context, chain *pipeline.Chain, idx uint32, es *abkitv1.ExchangeSpec) *abkitv1.ExchangeRun {
	rq := es.GetRequest()
	req := pipeline.Request{Request: gateway.Request{Method: rq.GetMethod(), URL: rq.GetUrl(), Scheme: rq.GetScheme(), Host: rq.GetHost(), Path: rq.GetPath(),
		RawQuery: rq.GetRawQuery(), RemoteAddr: rq.GetRemoteAddr(), Header: abkitv1.HeaderFromProto(rq.GetHeader())}, Body: runtimekit.RequestBody(rq)}
	client, rctx := runtimekit.NewClient(ctx, es)
	defer client.Cancel()
	orig := req.Header.Clone() // the exchange takes req.Header
	e := chain.NewExchange(req, pipeline.ExchangeOptions{Client: pipeline.HTTPClient{W: client}})
	gx := e.Gateway()
	runtimekit.SetExchange(gx, idx)
	gateway.SetState(gx, reqCtxKey, rctx)
	gateway.SetState(gx, clientKey, client)
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
		u := runtimekit.NewUpstream(es.GetUpstream())
		up := pipeline.Upstream{Status: u.Status, Header: u.Header, Body: u.Body, Err: u.Err}
		if u.Stream != nil {
			up.Stream = u.Stream
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
	out := &abkitv1.ExchangeRun{Outcome: runtimekit.OutcomeOf(res.Outcome), Streamed: res.Streamed, Frames: int32(res.Frames),
		RequestBody: res.RequestBody, Cancelled: errors.Is(res.Err, pipeline.ErrCanceled),
		UpstreamCalled: upHeader != nil, UpstreamHeader: abkitv1.HeaderToProto(upHeader)}
	client.Fill(out)
	if s.opts.Alt == "reframed-relay" && strings.HasPrefix(strings.ToLower(client.Header().Get("Content-Type")), "text/event-stream") {
		out.Body = reframe(out.Body) // Alternative (P19.relay): the client gets the events re-framed.
	}
	if s.opts.Alt == "json-deny-body" && out.Outcome.GetKind() == "deny" && !res.Streamed &&
		res.Outcome.Reason != "" && strings.TrimSpace(string(out.Body)) == res.Outcome.Reason {
		// Alternative (P15.deny-wire): a denial the pipeline wrote as its
		// reason in text (not a rejection with a body of its own, not one
		// after the stream began) is a JSON error, as AuthBridge's
		// httpx.WriteRejection writes it.
		out.Body, _ = json.Marshal(map[string]any{"error": map[string]any{"status": out.Status, "message": res.Outcome.Reason}})
	}
	if s.opts.Alt == "outcome-without-reason" && out.Outcome != nil {
		out.Outcome.Reason = "" // Alternative (P29): the outcome has no reason field.
	}
	if res.Err != nil {
		out.Error = res.Err.Error()
	}
	for _, w := range res.Warnings {
		out.Warnings = append(out.Warnings, runtimekit.Warning(w.Rule, w.Plugin, w.String()))
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

// reframe re-writes an event stream as AuthBridge's reverse proxy relays
// it: each event that carries data as its event: and data: lines,
// comments and field-only blocks dropped.
func reframe(b []byte) []byte {
	var out bytes.Buffer
	var f sse.Framer
	write := func(raw []byte) {
		ev := sse.Parse(raw)
		if !ev.HasData {
			return
		}
		if ev.Event != "" {
			out.WriteString("event: " + ev.Event + "\n")
		}
		for _, l := range strings.Split(ev.Data, "\n") {
			out.WriteString("data: " + l + "\n")
		}
		out.WriteString("\n")
	}
	_ = f.Feed(b, func(raw []byte, isFrame bool) error {
		write(raw)
		return nil
	})
	_, _ = f.End(func(raw []byte, _ bool) error {
		write(raw)
		return nil
	})
	return out.Bytes()
}
