package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"google.golang.org/grpc"

	"github.com/abkit/abkit/internal/pipeline"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/gateway"
)

// RemotePanic is a hook panic inside the plugin process. The adapter returns
// it to the pipeline runtime as the hook's failure (pipeline.FailingHooks),
// which reports it exactly as it reports an in-process panic (its text is
// the panic value); Stack is the plugin-side stack.
type RemotePanic struct {
	Plugin string
	Value  string
	Stack  string
}

func (p *RemotePanic) Error() string { return p.Value }

func splitPanic(plugin, text string) *RemotePanic {
	v, st, _ := strings.Cut(text, "\n\n")
	return &RemotePanic{Plugin: plugin, Value: v, Stack: st}
}

// Factory returns the plugin's family P factory: its instances are made in
// the plugin process and appear to the pipeline runtime as ordinary plugins
// with exactly the optional behaviours the plugin declares. ok is false when
// the plugin serves no pipeline.
//
// A failed call (the process died, the call timed out) inside OnRequest,
// OnResponse, OnResponseFrame or OnFinish is a *CallError, and a panic in
// the plugin a *RemotePanic. The instances give them to the pipeline
// runtime as errors through pipeline.FailingHooks, which it turns into an
// error outcome naming the plugin (status 500), as it does a recovered
// panic. The gateway.Plugin methods, for a caller outside the runtime,
// have no error result: they panic with the same value.
func (p *Plugin) Factory() (f gateway.Factory, ok bool) {
	info := p.desc.GetPipeline()
	if info == nil {
		return gateway.Factory{}, false
	}
	f.Name = p.name
	if b := info.GetConfigSchemaJson(); len(b) > 0 {
		var cs gateway.ConfigSchema
		if err := json.Unmarshal(b, &cs); err == nil {
			f.Config = &cs
		}
	}
	f.New = p.newInstance
	return f, true
}

func (p *Plugin) newInstance(config json.RawMessage) (gateway.Plugin, error) {
	ctx, cancel := p.callCtx(context.Background())
	defer cancel()
	resp, err := p.rpc.NewInstance(ctx, &abkitv1.NewInstanceRequest{ConfigJson: config})
	if err != nil {
		return nil, p.callErr("new instance", err)
	}
	if resp.GetError() != "" {
		return nil, errors.New(resp.GetError())
	}
	r := &remote{p: p, id: resp.GetInstance(), name: resp.GetCapabilities().GetName(),
		caps: resp.GetCapabilities().Gateway()}
	r.key = gateway.NewKey[*hostEx]("pluginhost:" + p.name)
	var mask behaviour
	for _, b := range resp.GetBehaviours() {
		switch b {
		case gateway.BehaviourInit:
			mask |= bInit
		case gateway.BehaviourShutdown:
			mask |= bShutdown
		case gateway.BehaviourFinish:
			mask |= bFinish
		case gateway.BehaviourStream:
			mask |= bStream
		case gateway.BehaviourReady:
			mask |= bReady
		}
	}
	r.finishes = mask&bFinish != 0
	return gateway.Compose(r, r.optional(mask)), nil
}

// optional is the behaviours in mask, as the remote's calls: the host's
// stand-in has exactly the behaviours its plugin declares.
func (r *remote) optional(mask behaviour) gateway.Optional {
	var o gateway.Optional
	if mask&bInit != 0 {
		o.Init = r.init
	}
	if mask&bShutdown != 0 {
		o.Shutdown = r.shutdown
	}
	if mask&bFinish != 0 {
		o.Finish = r.onFinish
	}
	if mask&bStream != 0 {
		o.Frame = r.frame
	}
	if mask&bReady != 0 {
		o.Ready = r.ready
	}
	return o
}

var _ pipeline.FailingHooks = (*remote)(nil)

// behaviour is a bit set of the optional behaviours of family P.
type behaviour uint8

const (
	bInit behaviour = 1 << iota
	bShutdown
	bFinish
	bStream
	bReady
)

// remote is the host side of one plugin instance in the plugin process.
// Its failures reach the runtime as errors, not panics.
type remote struct {
	p        *Plugin
	id       uint64
	name     string
	caps     gateway.Capabilities
	key      gateway.Key[*hostEx]
	finishes bool
}

// hostEx is what the host remembers about one exchange of one instance.
type hostEx struct {
	id uint64
	// sent holds each extension's JSON as the plugin last saw it.
	sent map[string][]byte
	// identity is the identity's JSON as the plugin last saw it (P36).
	identity []byte
	reqBody  []byte // the request body the plugin has
	respBody []byte
	final    atomic.Bool

	fs       abkitv1.Plugin_FramesClient
	fsCancel context.CancelFunc
	fsTimed  atomic.Bool
}

func (r *remote) Name() string                       { return r.name }
func (r *remote) Capabilities() gateway.Capabilities { return r.caps }

func (r *remote) state(ex *gateway.Exchange) *hostEx {
	hx, ok := gateway.GetState(ex, r.key)
	if ok {
		return hx
	}
	hx = &hostEx{id: r.p.nextEx.Add(1), sent: make(map[string][]byte)}
	gateway.SetState(ex, r.key, hx)
	if !r.finishes {
		// Without OnFinish the plugin may never learn that an exchange
		// ended (a later plugin denied it, the upstream failed): release
		// its state when the exchange is collected.
		runtime.AddCleanup(ex, r.release, hx)
	}
	return hx
}

func (r *remote) release(hx *hostEx) {
	if hx.final.Load() || r.p.Exited() {
		return
	}
	go func() {
		ctx, cancel := r.p.callCtx(context.Background())
		defer cancel()
		_, _ = r.p.rpc.Release(ctx, &abkitv1.ReleaseRequest{Instance: r.id, Exchanges: []uint64{hx.id}})
	}()
}

func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (a == nil) == (b == nil) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// extensionsOut returns the extensions that changed since the plugin last
// saw them.
func (hx *hostEx) extensionsOut(ex *gateway.Exchange) []*abkitv1.ExtensionValue {
	var out []*abkitv1.ExtensionValue
	held := 0 // keys of ex that are in hx.sent after the loop
	for k, v := range ex.Extensions() {
		b, err := json.Marshal(v)
		if err != nil {
			continue // SetExtension requires JSON values; the in-process path has the value
		}
		held++
		if old, ok := hx.sent[k]; ok && bytes.Equal(old, b) {
			continue
		}
		hx.sent[k] = b
		out = append(out, &abkitv1.ExtensionValue{Key: k, Json: b})
	}
	if len(hx.sent) > held {
		out = appendRemoved(out, hx.sent, ex)
	}
	return out
}

// appendRemoved adds a removal marker for each key the other side has seen
// and the exchange no longer holds (Exchange.DeleteExtension, or a value
// the host refused), and forgets it.
func appendRemoved(out []*abkitv1.ExtensionValue, seen map[string][]byte, ex *gateway.Exchange) []*abkitv1.ExtensionValue {
	for k := range seen {
		if _, ok := ex.Extension(k); !ok {
			delete(seen, k)
			out = append(out, &abkitv1.ExtensionValue{Key: k, Removed: true})
		}
	}
	return out
}

// extensionsIn stores the plugin's changed extensions on the host exchange.
func (hx *hostEx) extensionsIn(ex *gateway.Exchange, vals []*abkitv1.ExtensionValue) {
	for _, e := range vals {
		if e.GetRemoved() {
			ex.DeleteExtension(e.GetKey())
			delete(hx.sent, e.GetKey())
			continue
		}
		var v any
		if err := json.Unmarshal(e.GetJson(), &v); err != nil {
			continue
		}
		ex.SetExtension(e.GetKey(), v)
		b, _ := json.Marshal(v)
		hx.sent[e.GetKey()] = b
	}
}

// identityOut returns the exchange's identity as JSON when the plugin has
// not seen it yet (P36), or nil.
func (hx *hostEx) identityOut(ex *gateway.Exchange) []byte {
	id, ok := ex.Identity()
	if !ok {
		return nil
	}
	b, err := json.Marshal(id)
	if err != nil || bytes.Equal(b, hx.identity) {
		return nil
	}
	hx.identity = b
	return b
}

// changesIn applies what the plugin's call changed besides bodies and
// extensions: header deltas (the runtime then polices them as for an
// in-process plugin: P32, P33) and the identity (P36).
func (hx *hostEx) changesIn(ex *gateway.Exchange, reqH, respH *abkitv1.HeaderDelta, identity []byte) {
	if !reqH.Empty() {
		if ex.Request.Header == nil {
			ex.Request.Header = http.Header{}
		}
		reqH.Apply(ex.Request.Header)
	}
	if !respH.Empty() {
		if ex.Response.Header == nil {
			ex.Response.Header = http.Header{}
		}
		respH.Apply(ex.Response.Header)
	}
	if len(identity) > 0 {
		var id gateway.Identity
		if err := json.Unmarshal(identity, &id); err == nil {
			ex.SetIdentity(id)
			hx.identity, _ = json.Marshal(id)
		}
	}
}

func (hx *hostEx) request(ex *gateway.Exchange) *abkitv1.HTTPRequest {
	r := &ex.Request
	req := &abkitv1.HTTPRequest{Method: r.Method, Url: r.URL, Header: abkitv1.HeaderToProto(r.Header),
		Scheme: r.Scheme, Host: r.Host, Path: r.Path, RawQuery: r.RawQuery, RemoteAddr: r.RemoteAddr}
	if b := ex.RequestBody(); b != nil && !sameSlice(b, hx.reqBody) {
		req.HasBody, req.Body, hx.reqBody = true, b, b
	}
	return req
}

func (hx *hostEx) response(ex *gateway.Exchange) *abkitv1.HTTPResponse {
	if ex.Response.Status == 0 {
		return nil
	}
	resp := &abkitv1.HTTPResponse{Status: int32(ex.Response.Status), Header: abkitv1.HeaderToProto(ex.Response.Header)}
	if b := ex.ResponseBody(); b != nil && !sameSlice(b, hx.respBody) {
		resp.HasBody, resp.Body, hx.respBody = true, b, b
	}
	return resp
}

// applyWrites repeats the plugin's body writes on the host exchange, which
// applies or refuses each (P17). A write refused plugin-side carries the
// body it tried when the plugin did not declare it: the host exchange
// keeps that one if the runtime keeps undeclared writes (choice
// P17.undeclared-write), and refuses it otherwise, as it refuses a write
// without a body (the current body stands in for it).
func (hx *hostEx) applyWrites(ex *gateway.Exchange, ws []*abkitv1.BodyWrite) {
	for _, w := range ws {
		var b []byte
		switch {
		case w.GetApplied():
			b = nonNil(w.GetBody())
		case w.GetBody() != nil:
			b = w.GetBody()
		case w.GetResponse():
			b = ex.ResponseBody()
		default:
			b = ex.RequestBody()
		}
		if w.GetResponse() {
			if ex.SetResponseBody(b) {
				hx.respBody = b
			}
		} else if ex.SetRequestBody(b) {
			hx.reqBody = b
		}
	}
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func outcomeToProto(o gateway.Outcome) *abkitv1.Outcome {
	k := ""
	switch o.Kind {
	case gateway.OutcomeAllow, gateway.OutcomeDeny, gateway.OutcomeError:
		k = o.Kind.String()
	}
	return &abkitv1.Outcome{Kind: k, Status: int32(o.Status), DeniedBy: o.DeniedBy, Reason: o.Reason, DurationNs: int64(o.Duration)}
}

type grpcCallOption = grpc.CallOption

// hookCtx is the context of a pipeline hook call across the boundary. An
// in-process plugin is called even when the request context is already
// cancelled (it may look at ctx.Err()), so the call must not fail just
// because ctx is: it is made with ctx's values but not its cancellation,
// bounded by the call timeout and by ctx's deadline while that is still
// ahead. The cancellation itself travels as HookRequest.ctx_err. A cancel
// that arrives while the plugin runs is not forwarded (see
// docs/protocol.md).
func (p *Plugin) hookCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	d := time.Now().Add(p.opts.CallTimeout)
	if dl, ok := ctx.Deadline(); ok && ctx.Err() == nil && dl.Before(d) {
		d = dl
	}
	cctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), d)
	return p.abortable(cctx, cancel)
}

// ctxErrName is how ctx ended, for HookRequest.ctx_err: "" while it runs.
func ctxErrName(ctx context.Context) string {
	switch err := ctx.Err(); {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded" // HookRequest.ctx_err values, see abkit.proto
	default:
		return "canceled"
	}
}

type unaryHook func(context.Context, *abkitv1.HookRequest, ...grpcCallOption) (*abkitv1.HookResponse, error)

// call makes one unary hook call. Its error is a *CallError when the call
// failed and a *RemotePanic when the plugin panicked (after the changes the
// plugin made before panicking are applied, as they are in process).
func (r *remote) call(ctx context.Context, ex *gateway.Exchange, name string, final bool, f unaryHook) (*abkitv1.HookResponse, error) {
	hx := r.state(ex)
	req := &abkitv1.HookRequest{Instance: r.id, Exchange: hx.id, Direction: ex.Direction.String(),
		Request: hx.request(ex), Response: hx.response(ex), Extensions: hx.extensionsOut(ex), Final: final,
		IdentityJson: hx.identityOut(ex)}
	if o, ok := ex.Outcome(); ok {
		req.Outcome = outcomeToProto(o)
	}
	req.CtxErr = ctxErrName(ctx)
	cctx, cancel := r.p.hookCtx(ctx)
	dl, _ := cctx.Deadline()
	// bound is named in a deadline error only when the caller's deadline,
	// not the call timeout, set it.
	var bound time.Duration
	if cd, ok := ctx.Deadline(); ok && !cd.After(dl) {
		if bound = time.Until(dl); bound == 0 {
			bound = -1
		}
	}
	resp, err := f(cctx, req)
	cancel()
	if final {
		hx.final.Store(true)
	}
	if err != nil {
		return nil, r.p.callErrWithin(name, err, bound)
	}
	hx.applyWrites(ex, resp.GetWrites())
	hx.extensionsIn(ex, resp.GetExtensions())
	hx.changesIn(ex, resp.GetRequestHeader(), resp.GetResponseHeader(), resp.GetIdentityJson())
	if resp.GetPanicked() {
		return nil, splitPanic(r.name, resp.GetError())
	}
	return resp, nil
}

// mustAct is a hook's action for a caller of the gateway.Plugin methods,
// which have no error result: a failure panics with its error, as a
// failing in-process hook would panic.
func mustAct(a gateway.Action, failure error) gateway.Action {
	if failure != nil {
		panic(failure)
	}
	return a
}

// OnRequest implements gateway.Plugin (P15); the runtime calls
// OnRequestErr instead.
func (r *remote) OnRequest(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	return mustAct(r.OnRequestErr(ctx, ex))
}

// OnRequestErr implements pipeline.FailingHooks: OnRequest with the call's
// failure as its error.
func (r *remote) OnRequestErr(ctx context.Context, ex *gateway.Exchange) (gateway.Action, error) {
	resp, err := r.call(ctx, ex, "on_request", false, r.p.rpc.OnRequest)
	if err != nil {
		return gateway.Action{}, err
	}
	a := resp.GetAction().Gateway()
	if !a.IsContinue() && !r.finishes {
		// Without OnFinish, a rejection is this instance's last call (P16,
		// P26): drop the plugin-side state now.
		hx := r.state(ex)
		r.release(hx)
		hx.final.Store(true)
	}
	return a, nil
}

// OnResponse implements gateway.Plugin (P16); the runtime calls
// OnResponseErr instead.
func (r *remote) OnResponse(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	return mustAct(r.OnResponseErr(ctx, ex))
}

// OnResponseErr implements pipeline.FailingHooks.
func (r *remote) OnResponseErr(ctx context.Context, ex *gateway.Exchange) (gateway.Action, error) {
	resp, err := r.call(ctx, ex, "on_response", !r.finishes, r.p.rpc.OnResponse)
	if err != nil {
		return gateway.Action{}, err
	}
	return resp.GetAction().Gateway(), nil
}

// onFinish is the instance's gateway.Finisher when the plugin declares it;
// the runtime calls OnFinishErr instead.
func (r *remote) onFinish(ctx context.Context, ex *gateway.Exchange) error {
	err, failure := r.OnFinishErr(ctx, ex)
	if failure != nil {
		panic(failure)
	}
	return err
}

// OnFinishErr implements pipeline.FailingHooks: err is what the plugin's
// OnFinish returned, failure the call's failure. The runtime calls it only
// when the plugin declares OnFinish.
func (r *remote) OnFinishErr(ctx context.Context, ex *gateway.Exchange) (err, failure error) {
	resp, failure := r.call(ctx, ex, "on_finish", true, r.p.rpc.Finish)
	if failure != nil {
		return nil, failure
	}
	if e := resp.GetError(); e != "" {
		return errors.New(e), nil
	}
	return nil, nil
}

func (r *remote) status(ctx context.Context, name string, f func(context.Context, *abkitv1.InstanceRequest, ...grpcCallOption) (*abkitv1.Status, error)) error {
	cctx, cancel := r.p.callCtx(ctx)
	defer cancel()
	st, err := f(cctx, &abkitv1.InstanceRequest{Instance: r.id})
	if err != nil {
		return r.p.callErr(name, err)
	}
	if e := st.GetError(); e != "" {
		return errors.New(e)
	}
	return nil
}

func (r *remote) init(ctx context.Context) error { return r.status(ctx, "init", r.p.rpc.Init) }
func (r *remote) shutdown(ctx context.Context) error {
	return r.status(ctx, "shutdown", r.p.rpc.Shutdown)
}
func (r *remote) ready(ctx context.Context) error { return r.status(ctx, "ready", r.p.rpc.Ready) }

// frame is the instance's gateway.StreamingResponder when the plugin
// declares it; the runtime calls OnResponseFrameErr instead.
func (r *remote) frame(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	return mustAct(r.OnResponseFrameErr(ctx, ex, frame, last))
}

// OnResponseFrameErr implements pipeline.FailingHooks. It sends one frame
// over the exchange's stream and waits for the answer (P20: the runtime
// calls the next plugin, or sends the next frame, only after this
// returns). The runtime calls it only when the plugin declares streaming.
func (r *remote) OnResponseFrameErr(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) (gateway.Action, error) {
	hx := r.state(ex)
	final := last && !r.finishes
	req := &abkitv1.FrameRequest{Frame: frame, Last: last, Extensions: hx.extensionsOut(ex), Final: final,
		IdentityJson: hx.identityOut(ex)}
	if hx.fs == nil {
		sctx, cancel := r.p.abortable(context.WithCancel(context.WithoutCancel(ctx)))
		fs, err := r.p.rpc.Frames(sctx)
		if err != nil {
			cancel()
			return gateway.Action{}, r.p.callErr("on_response_frame", err)
		}
		hx.fs, hx.fsCancel = fs, cancel
		req.Instance, req.Exchange, req.Response = r.id, hx.id, hx.response(ex)
	} else if b := ex.ResponseBody(); b != nil && !sameSlice(b, hx.respBody) {
		req.Response = hx.response(ex)
	}
	// As for the unary hooks (hookCtx), a cancelled request context does
	// not end the stream: the plugin is told (ctx_err) and answers, as an
	// in-process plugin is called anyway. The answer is bounded by the call
	// timeout, or the request's deadline if it is earlier and still ahead.
	req.CtxErr = ctxErrName(ctx)
	bound := r.p.opts.CallTimeout
	if d, ok := ctx.Deadline(); ok {
		req.DeadlineUnixNano = d.UnixNano()
		if left := time.Until(d); ctx.Err() == nil && left < bound {
			bound = left
		}
	}
	timer := time.AfterFunc(bound, func() { hx.fsTimed.Store(true); hx.fsCancel() })
	err := hx.fs.Send(req)
	var resp *abkitv1.FrameResponse
	if err == nil {
		resp, err = hx.fs.Recv()
	}
	timer.Stop()
	if last || err != nil {
		if err == nil {
			_ = hx.fs.CloseSend()
		}
		hx.fsCancel()
		hx.fs = nil
	}
	if final {
		hx.final.Store(true)
	}
	if err != nil {
		if hx.fsTimed.Load() {
			return gateway.Action{}, &CallError{Plugin: r.p.name, Call: "on_response_frame",
				Err: fmt.Errorf("no answer within %s (the call timeout %s, or the request's deadline if earlier): %w", bound.Round(time.Millisecond), r.p.opts.CallTimeout, context.DeadlineExceeded)}
		}
		return gateway.Action{}, r.p.callErr("on_response_frame", err)
	}
	hx.applyWrites(ex, resp.GetWrites())
	hx.extensionsIn(ex, resp.GetExtensions())
	hx.changesIn(ex, resp.GetRequestHeader(), resp.GetResponseHeader(), resp.GetIdentityJson())
	if resp.GetPanicked() {
		return gateway.Action{}, splitPanic(r.name, resp.GetError())
	}
	return resp.GetAction().Gateway(), nil
}
