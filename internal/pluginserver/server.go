// Package pluginserver is the plugin side of abkit's process boundary: the
// gRPC server (proto/abkit/v1) that sdk.Serve puts a plugin behind. It
// keeps each pipeline instance and each exchange's plugin-side state, and
// applies what crosses the boundary. It is abkit's machinery, not a plugin
// author's API: an author calls sdk.Serve, and abkit's own tests serve
// helper plugins with it directly.
package pluginserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/abkit/abkit/internal/probe"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// SDKVersion is reported by Describe, for diagnostics.
const SDKVersion = "abkit-go-sdk/v1"

// Bundle is what the server serves: one plugin's families, as sdk.Plugin
// holds them, with its family D extension already made. sdk.Serve builds
// it from an sdk.Plugin it has checked (sdk.Plugin.Servable).
type Bundle struct {
	Name, Description, Version string

	// Pipeline is the family P factory; nil if none.
	Pipeline *gateway.Factory
	// Manifest and Extension are the family D extension; Extension is nil
	// if none.
	Manifest  intercept.Manifest
	Extension intercept.Extension
	// Hooks are the family H hooks; nil if none.
	Hooks *Hooks
	// Alternatives are the declared alternatives at choice points
	// (sdk.Plugin.Alternatives).
	Alternatives map[string]string
}

// Hooks is the family H hooks of a Bundle.
type Hooks struct {
	Submit []hooks.SubmitHook
	Parts  []hooks.PartHook
	Tools  []hooks.ToolReactor
}

// families returns the contract families b serves, in P, D, H order.
func (b Bundle) families() []string {
	return family.Of(b.Pipeline != nil, b.Extension != nil, b.Hooks != nil)
}

// ReattachJSON is the reattach config in the JSON form sdk.Serve prints in
// debug mode and `conformance run --reattach` reads (go-plugin's
// PLUGIN_REATTACH shape). It is defined once, here: conformance's
// ReattachConfig is this type.
type ReattachJSON struct {
	Protocol        string `json:"Protocol"`
	ProtocolVersion int    `json:"ProtocolVersion"`
	Addr            struct {
		Network string `json:"Network"`
		String  string `json:"String"`
	} `json:"Addr"`
	Pid  int  `json:"Pid"`
	Test bool `json:"Test"`
}

// ServeDebug serves cfg in go-plugin's reattach mode until ctx ends, after
// writing the reattach config as one line of JSON to out (sdk.ServeDebug).
func ServeDebug(ctx context.Context, cfg *plugin.ServeConfig, out io.Writer) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	c := *cfg
	c.Test = &plugin.ServeTestConfig{Context: sctx, ReattachConfigCh: ch, CloseCh: closed}
	go plugin.Serve(&c)
	select {
	case rc := <-ch:
		var j ReattachJSON
		j.Protocol, j.ProtocolVersion, j.Pid, j.Test = string(rc.Protocol), rc.ProtocolVersion, rc.Pid, true
		j.Addr.Network, j.Addr.String = rc.Addr.Network(), rc.Addr.String()
		b, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("encode the reattach config: %w", err)
		}
		if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
			return fmt.Errorf("print the reattach config: %w", err)
		}
	case <-closed:
		return errors.New("go-plugin stopped before it listened (see the log above)")
	}
	<-closed
	return nil
}

// GRPCPlugin is the go-plugin plugin of the abkit protocol. A plugin binary
// sets Impl; hosts use their own implementation of GRPCClient.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl *Server
}

// GRPCServer registers the Plugin and Diagnostics services.
func (g GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	abkitv1.RegisterPluginServer(s, g.Impl)
	abkitv1.RegisterDiagnosticsServer(s, g.Impl)
	return nil
}

// GRPCClient is not used on the plugin side.
func (GRPCPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, fmt.Errorf("pluginserver: GRPCPlugin serves plugins; hosts use internal/pluginhost")
}

// Server implements the abkit protocol (proto/abkit/v1) for one [Plugin]. It
// keeps each pipeline instance and each exchange's plugin-side state (typed
// state, P31) until the host's final call or Release for that exchange.
type Server struct {
	abkitv1.UnimplementedPluginServer
	abkitv1.UnimplementedDiagnosticsServer

	p     Bundle
	desc  *abkitv1.DescribeResponse
	ext   intercept.Extension
	hooks []hookEntry

	mu       sync.Mutex
	nextInst uint64
	insts    map[uint64]*instance
}

type hookEntry struct {
	spec   hooks.Spec
	submit hooks.SubmitHook
	part   hooks.PartHook
	tool   hooks.ToolReactor
}

type instance struct {
	name        string
	p           gateway.Plugin
	dir         gateway.Direction
	wReq, wResp bool
	fin         gateway.Finisher
	stream      gateway.StreamingResponder

	mu  sync.Mutex
	exs map[uint64]*exState
}

// exState is the plugin side of one exchange.
type exState struct {
	ex  *gateway.Exchange
	ctl *gateway.Control
	// ext holds each extension's JSON as both sides last saw it, so that
	// only changes cross the boundary.
	ext map[string][]byte
	// reqSnap and respSnap are the headers as both sides last saw them,
	// so that only a call's changes go back (P32, P33); idGen is the
	// identity's generation both sides have (P36).
	// A snapshot is the wire list as received (wireReq, wireResp) until a
	// call changed the header, then the map as the host now has it.
	wireReq, wireResp []*abkitv1.Header
	reqSnap, respSnap http.Header
	idGen             uint32
}

// NewServer returns a server for b. The caller has checked that b can be
// served (sdk.Plugin.Servable) and made its extension; like sdk.Serve the
// server serves a description that breaks P5 as is, for hosts to judge.
// sdk.Serve uses it; tests can serve it on their own listener.
func NewServer(b Bundle) *Server {
	s := &Server{p: b, ext: b.Extension, insts: make(map[uint64]*instance)}
	if h := b.Hooks; h != nil {
		for _, x := range h.Submit {
			s.hooks = append(s.hooks, hookEntry{spec: x.Spec(), submit: x})
		}
		for _, x := range h.Parts {
			s.hooks = append(s.hooks, hookEntry{spec: x.Spec(), part: x})
		}
		for _, x := range h.Tools {
			s.hooks = append(s.hooks, hookEntry{spec: x.Spec(), tool: x})
		}
	}
	s.desc = s.describe()
	return s
}

func (s *Server) describe() *abkitv1.DescribeResponse {
	d := &abkitv1.DescribeResponse{
		Name:         s.p.Name,
		Description:  s.p.Description,
		Version:      s.p.Version,
		Families:     s.p.families(),
		Sdk:          SDKVersion,
		Alternatives: s.p.Alternatives,
	}
	if f := s.p.Pipeline; f != nil {
		info := &abkitv1.PipelineInfo{}
		if f.Config != nil {
			info.ConfigSchemaJson, _ = json.Marshal(f.Config)
		}
		insts, _, err := probe.Instances(f)
		if err != nil {
			info.ProbeError = err.Error()
		} else {
			info.Capabilities = abkitv1.CapabilitiesToProto(insts[0].Name(), insts[0].Capabilities())
			info.Behaviours = gateway.Behaviours(insts[0])
			for _, in := range insts {
				info.Observed = append(info.Observed, abkitv1.CapabilitiesToProto(in.Name(), in.Capabilities()))
			}
		}
		d.Pipeline = info
	}
	if s.p.Extension != nil {
		m := s.p.Manifest
		pm := &abkitv1.Manifest{PluginId: m.PluginID, Required: m.Required, Priority: int32(m.Priority),
			Slots: m.Slots, TimeoutNs: int64(m.Timeout)}
		for _, pt := range m.Points {
			pm.Points = append(pm.Points, string(pt))
		}
		d.Extension = pm
	}
	for i, h := range s.hooks {
		d.Hooks = append(d.Hooks, &abkitv1.HookSpec{Id: h.spec.ID, Order: int64(h.spec.Order),
			Policy: string(h.spec.Policy), Kind: string(h.spec.Kind), Index: uint32(i)})
	}
	return d
}

// Describe implements the protocol's Describe.
func (s *Server) Describe(context.Context, *abkitv1.DescribeRequest) (*abkitv1.DescribeResponse, error) {
	return s.desc, nil
}

// Echo implements the Diagnostics service.
func (s *Server) Echo(_ context.Context, m *abkitv1.EchoMessage) (*abkitv1.EchoMessage, error) {
	return m, nil
}

// EchoStream implements the Diagnostics service.
func (s *Server) EchoStream(st abkitv1.Diagnostics_EchoStreamServer) error {
	for {
		m, err := st.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := st.Send(m); err != nil {
			return err
		}
	}
}

func errPipeline(name string) error {
	return status.Errorf(codes.Unimplemented, "plugin %q serves no pipeline (family P)", name)
}

// NewInstance implements the protocol's NewInstance.
func (s *Server) NewInstance(_ context.Context, r *abkitv1.NewInstanceRequest) (*abkitv1.NewInstanceResponse, error) {
	f := s.p.Pipeline
	if f == nil {
		return nil, errPipeline(s.p.Name)
	}
	var cfg json.RawMessage
	if len(r.GetConfigJson()) > 0 {
		cfg = r.GetConfigJson()
	}
	p, err := probe.New(f, cfg)
	if err != nil {
		return &abkitv1.NewInstanceResponse{Error: err.Error()}, nil
	}
	dir, _ := gateway.ParseDirection(r.GetDirection())
	caps := p.Capabilities()
	n := caps.Normalize()
	in := &instance{name: f.Name, p: p, dir: dir, wReq: n.WritesRequestBody, wResp: n.WritesResponseBody,
		exs: make(map[uint64]*exState)}
	in.fin, _ = p.(gateway.Finisher)
	in.stream, _ = p.(gateway.StreamingResponder)
	s.mu.Lock()
	s.nextInst++
	id := s.nextInst
	s.insts[id] = in
	s.mu.Unlock()
	return &abkitv1.NewInstanceResponse{Instance: id, Capabilities: abkitv1.CapabilitiesToProto(p.Name(), caps),
		Behaviours: gateway.Behaviours(p)}, nil
}

func (s *Server) instance(id uint64) (*instance, error) {
	s.mu.Lock()
	in := s.insts[id]
	s.mu.Unlock()
	if in == nil {
		if s.p.Pipeline == nil {
			return nil, errPipeline(s.p.Name)
		}
		return nil, status.Errorf(codes.NotFound, "plugin %q has no instance %d", s.p.Name, id)
	}
	return in, nil
}

// safe runs f, turning a panic into an error that carries the stack.
func safe(f func() error) (err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			err, panicked = &panicError{value: fmt.Sprint(r), stack: string(debug.Stack())}, true
		}
	}()
	return f(), false
}

type panicError struct{ value, stack string }

func (e *panicError) Error() string { return e.value }

func statusOf(err error) *abkitv1.Status {
	if err == nil {
		return &abkitv1.Status{}
	}
	return &abkitv1.Status{Error: err.Error()}
}

// Init implements the protocol's Init (P12).
func (s *Server) Init(ctx context.Context, r *abkitv1.InstanceRequest) (*abkitv1.Status, error) {
	return lifecycle(s, r, func(i gateway.Initializer) error { return i.Init(ctx) })
}

// Shutdown implements the protocol's Shutdown (P13).
func (s *Server) Shutdown(ctx context.Context, r *abkitv1.InstanceRequest) (*abkitv1.Status, error) {
	return lifecycle(s, r, func(i gateway.Shutdowner) error { return i.Shutdown(ctx) })
}

// Ready implements the protocol's Ready (P14).
func (s *Server) Ready(ctx context.Context, r *abkitv1.InstanceRequest) (*abkitv1.Status, error) {
	return lifecycle(s, r, func(i gateway.Readier) error { return i.Ready(ctx) })
}

// lifecycle calls the optional behaviour B of r's instance: an instance
// without it has nothing to do (an empty status), and a panic in call is
// reported in the status as an error.
func lifecycle[B any](s *Server, r *abkitv1.InstanceRequest, call func(B) error) (*abkitv1.Status, error) {
	in, err := s.instance(r.GetInstance())
	if err != nil {
		return nil, err
	}
	b, ok := in.p.(B)
	if !ok {
		return &abkitv1.Status{}, nil
	}
	err, p := safe(func() error { return call(b) })
	if p {
		err = fmt.Errorf("panic: %v", err)
	}
	return statusOf(err), nil
}

// state returns the exchange's plugin-side state, making it on first use.
func (in *instance) state(id uint64, dir string, req *abkitv1.HTTPRequest) *exState {
	in.mu.Lock()
	defer in.mu.Unlock()
	st := in.exs[id]
	if st == nil {
		d, err := gateway.ParseDirection(dir)
		if err != nil {
			d = in.dir
		}
		ex, ctl := gateway.NewExchange(d, gateway.Request{})
		st = &exState{ex: ex, ctl: ctl, ext: make(map[string][]byte)}
		in.exs[id] = st
		if req != nil && req.GetHasBody() {
			ctl.SetRequestBody(nonNil(req.GetBody()))
		}
	}
	return st
}

// Exchanges returns how many exchanges' plugin-side state the server holds,
// over all instances: state is kept from an exchange's first call until the
// host's final call or its Release. It is a diagnostic, for tests that
// check that state is released (a host that drops an exchange without a
// final call releases it once the exchange is garbage collected).
func (s *Server) Exchanges() int {
	s.mu.Lock()
	insts := make([]*instance, 0, len(s.insts))
	for _, in := range s.insts {
		insts = append(insts, in)
	}
	s.mu.Unlock()
	n := 0
	for _, in := range insts {
		in.mu.Lock()
		n += len(in.exs)
		in.mu.Unlock()
	}
	return n
}

func (in *instance) drop(id uint64) {
	in.mu.Lock()
	delete(in.exs, id)
	in.mu.Unlock()
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// apply brings the plugin-side exchange up to date with what the host sent.
func (st *exState) apply(req *abkitv1.HTTPRequest, resp *abkitv1.HTTPResponse, ext []*abkitv1.ExtensionValue, identity []byte) {
	if req != nil {
		r := &st.ex.Request
		r.Method, r.URL = req.GetMethod(), req.GetUrl()
		r.Scheme, r.Host, r.Path, r.RawQuery, r.RemoteAddr = req.GetScheme(), req.GetHost(), req.GetPath(), req.GetRawQuery(), req.GetRemoteAddr()
		r.Header = abkitv1.HeaderFromProto(req.GetHeader())
		st.wireReq, st.reqSnap = req.GetHeader(), nil
		if req.GetHasBody() {
			st.ctl.SetRequestBody(nonNil(req.GetBody()))
		}
	}
	if resp != nil {
		st.ctl.SetResponse(gateway.Response{Status: int(resp.GetStatus()), Header: abkitv1.HeaderFromProto(resp.GetHeader())})
		st.wireResp, st.respSnap = resp.GetHeader(), nil
		if resp.GetHasBody() {
			st.ctl.SetResponseBody(nonNil(resp.GetBody()))
		}
	}
	if len(identity) > 0 {
		var id gateway.Identity
		if err := json.Unmarshal(identity, &id); err == nil {
			st.ex.SetIdentity(id)
		}
		st.idGen = st.ctl.IdentityGen()
	}
	for _, e := range ext {
		if e.GetRemoved() {
			st.ex.DeleteExtension(e.GetKey())
			delete(st.ext, e.GetKey())
			continue
		}
		var v any
		if err := json.Unmarshal(e.GetJson(), &v); err != nil {
			continue // the host only sends what json.Marshal made
		}
		st.ex.SetExtension(e.GetKey(), v)
		// Remember the canonical form, so that an unchanged value is not
		// sent back.
		b, _ := json.Marshal(v)
		st.ext[e.GetKey()] = b
	}
}

// changes is what a call changed that goes back to the host.
type changes struct {
	reqHeader, respHeader *abkitv1.HeaderDelta
	identity              []byte
}

// collectHeaders returns the call's header and identity changes and makes
// them what both sides have seen.
func (st *exState) collectHeaders() changes {
	var c changes
	if d := delta(st.wireReq, st.reqSnap, st.ex.Request.Header); d != nil {
		c.reqHeader = d
		st.wireReq, st.reqSnap = nil, st.ex.Request.Header.Clone()
	}
	if d := delta(st.wireResp, st.respSnap, st.ex.Response.Header); d != nil {
		c.respHeader = d
		st.wireResp, st.respSnap = nil, st.ex.Response.Header.Clone()
	}
	if g := st.ctl.IdentityGen(); g != st.idGen {
		st.idGen = g
		id, _ := st.ex.Identity()
		c.identity, _ = json.Marshal(id)
	}
	return c
}

// delta is what changed from the snapshot (the wire list, or snap once a
// call changed the header) to cur.
func delta(wire []*abkitv1.Header, snap, cur http.Header) *abkitv1.HeaderDelta {
	if snap == nil {
		return abkitv1.HeaderDeltaFrom(wire, cur)
	}
	return abkitv1.HeaderDeltaOf(snap, cur)
}

// collect returns the body writes the call attempted and the extensions it
// changed.
func (st *exState) collect() ([]*abkitv1.BodyWrite, []*abkitv1.ExtensionValue) {
	var writes []*abkitv1.BodyWrite
	for _, w := range st.ctl.TakeWrites() {
		bw := &abkitv1.BodyWrite{Response: w.Response, Applied: w.Applied}
		switch {
		case w.Applied && w.Response:
			bw.Body = st.ex.ResponseBody()
		case w.Applied:
			bw.Body = st.ex.RequestBody()
		case w.Undeclared:
			// Refused here, but the runtime may keep it for the later
			// plugins (choice P17.undeclared-write): it decides.
			bw.Body = w.Body
		}
		writes = append(writes, bw)
	}
	st.ctl.TakeMutated()
	st.ctl.TakeExtensionChanges() // the host judges the changes; the record only needs emptying
	var ext []*abkitv1.ExtensionValue
	for k, v := range st.ex.Extensions() {
		b, err := json.Marshal(v)
		if err != nil {
			b, _ = json.Marshal(fmt.Sprintf("extension %q does not marshal to JSON: %v", k, err))
		}
		if old, ok := st.ext[k]; ok && bytes.Equal(old, b) {
			continue
		}
		st.ext[k] = b
		ext = append(ext, &abkitv1.ExtensionValue{Key: k, Json: b})
	}
	if len(st.ext) > len(st.ex.Extensions()) {
		// A key the host has seen is gone: the plugin deleted it.
		for k := range st.ext {
			if _, ok := st.ex.Extension(k); !ok {
				delete(st.ext, k)
				ext = append(ext, &abkitv1.ExtensionValue{Key: k, Removed: true})
			}
		}
	}
	return writes, ext
}

func (s *Server) hook(ctx context.Context, r *abkitv1.HookRequest, phase gateway.Phase) (*abkitv1.HookResponse, error) {
	in, err := s.instance(r.GetInstance())
	if err != nil {
		return nil, err
	}
	st := in.state(r.GetExchange(), r.GetDirection(), r.GetRequest())
	if r.GetFinal() {
		defer in.drop(r.GetExchange())
	}
	st.apply(r.GetRequest(), r.GetResponse(), r.GetExtensions(), r.GetIdentityJson())
	if o := r.GetOutcome(); o != nil {
		st.ctl.SetOutcome(outcomeFromProto(o))
	}
	st.ctl.Enter(in.name, phase, in.wReq, in.wResp)
	ctx, cancel := hostCtx(ctx, r.GetCtxErr(), 0)
	defer cancel()
	var act gateway.Action
	var herr error
	err, panicked := safe(func() error {
		switch phase {
		case gateway.PhaseRequest:
			act = in.p.OnRequest(ctx, st.ex)
		case gateway.PhaseResponse:
			act = in.p.OnResponse(ctx, st.ex)
		case gateway.PhaseFinish:
			if in.fin != nil {
				herr = in.fin.OnFinish(ctx, st.ex)
			}
		}
		return nil
	})
	resp := &abkitv1.HookResponse{Action: abkitv1.ActionToProto(act)}
	resp.Writes, resp.Extensions = st.collect()
	ch := st.collectHeaders()
	resp.RequestHeader, resp.ResponseHeader, resp.IdentityJson = ch.reqHeader, ch.respHeader, ch.identity
	switch {
	case panicked:
		resp.Error, resp.Panicked = panicText(err), true
	case herr != nil:
		resp.Error = herr.Error()
	}
	return resp, nil
}

// panicText is the panic value, then its stack; the host shows the value
// and keeps the stack for the operator.
func panicText(err error) string {
	if pe, ok := err.(*panicError); ok {
		return pe.value + "\n\n" + pe.stack
	}
	return err.Error()
}

func outcomeFromProto(o *abkitv1.Outcome) gateway.Outcome {
	out := gateway.Outcome{Status: int(o.GetStatus()), DeniedBy: o.GetDeniedBy(), Reason: o.GetReason()}
	out.Duration = durationNS(o.GetDurationNs())
	switch o.GetKind() {
	case "allow":
		out.Kind = gateway.OutcomeAllow
	case "deny":
		out.Kind = gateway.OutcomeDeny
	case "error":
		out.Kind = gateway.OutcomeError
	}
	return out
}

// OnRequest implements the protocol's OnRequest (P15).
func (s *Server) OnRequest(ctx context.Context, r *abkitv1.HookRequest) (*abkitv1.HookResponse, error) {
	return s.hook(ctx, r, gateway.PhaseRequest)
}

// OnResponse implements the protocol's OnResponse (P16).
func (s *Server) OnResponse(ctx context.Context, r *abkitv1.HookRequest) (*abkitv1.HookResponse, error) {
	return s.hook(ctx, r, gateway.PhaseResponse)
}

// Finish implements the protocol's Finish (P26–P30).
func (s *Server) Finish(ctx context.Context, r *abkitv1.HookRequest) (*abkitv1.HookResponse, error) {
	return s.hook(ctx, r, gateway.PhaseFinish)
}

// Release implements the protocol's Release.
func (s *Server) Release(_ context.Context, r *abkitv1.ReleaseRequest) (*abkitv1.Empty, error) {
	in, err := s.instance(r.GetInstance())
	if err != nil {
		return nil, err
	}
	for _, id := range r.GetExchanges() {
		in.drop(id)
	}
	return &abkitv1.Empty{}, nil
}

// Frames implements the protocol's Frames stream (P19–P25): one frame in,
// one answer out, in order.
func (s *Server) Frames(fs abkitv1.Plugin_FramesServer) error {
	ctx := fs.Context()
	var (
		in *instance
		st *exState
		id uint64
	)
	for {
		r, err := fs.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if in == nil {
			if in, err = s.instance(r.GetInstance()); err != nil {
				return err
			}
			if in.stream == nil {
				return status.Errorf(codes.FailedPrecondition, "plugin %q does not stream responses", in.name)
			}
			id = r.GetExchange()
			st = in.state(id, "", nil)
		}
		st.apply(nil, r.GetResponse(), r.GetExtensions(), r.GetIdentityJson())
		st.ctl.Enter(in.name, gateway.PhaseFrame, in.wReq, in.wResp)
		var act gateway.Action
		fctx, cancel := hostCtx(ctx, r.GetCtxErr(), r.GetDeadlineUnixNano())
		perr, panicked := safe(func() error {
			act = in.stream.OnResponseFrame(fctx, st.ex, r.GetFrame(), r.GetLast())
			return nil
		})
		cancel()
		resp := &abkitv1.FrameResponse{Action: abkitv1.ActionToProto(act)}
		resp.Writes, resp.Extensions = st.collect()
		ch := st.collectHeaders()
		resp.RequestHeader, resp.ResponseHeader, resp.IdentityJson = ch.reqHeader, ch.respHeader, ch.identity
		if panicked {
			resp.Error, resp.Panicked = panicText(perr), true
		}
		if r.GetFinal() {
			in.drop(id)
		}
		if err := fs.Send(resp); err != nil {
			return err
		}
	}
}

// Intercept implements the protocol's Intercept (family D).
func (s *Server) Intercept(ctx context.Context, r *abkitv1.InterceptRequest) (*abkitv1.InterceptResponse, error) {
	if s.ext == nil {
		return nil, status.Errorf(codes.Unimplemented, "plugin %q serves no extension (family D)", s.p.Name)
	}
	var a intercept.Answer
	err, panicked := safe(func() (err error) {
		a, err = s.ext.Call(ctx, intercept.Point(r.GetPoint()), r.GetPayloadJson())
		return err
	})
	if panicked {
		return &abkitv1.InterceptResponse{Error: "panic: " + err.Error()}, nil
	}
	if err != nil {
		return &abkitv1.InterceptResponse{Error: err.Error()}, nil
	}
	return &abkitv1.InterceptResponse{Decision: string(a.Decision), Reason: a.Reason, ReplacementJson: a.Replacement}, nil
}

// Notify implements the protocol's Notify (D20).
func (s *Server) Notify(_ context.Context, r *abkitv1.NotifyRequest) (*abkitv1.Status, error) {
	if s.ext == nil {
		return nil, status.Errorf(codes.Unimplemented, "plugin %q serves no extension (family D)", s.p.Name)
	}
	err, panicked := safe(func() error { return s.ext.Notify(intercept.Point(r.GetPoint()), r.GetPayloadJson()) })
	if panicked {
		err = fmt.Errorf("panic: %v", err)
	}
	return statusOf(err), nil
}

// hookAt returns hook i, which must be of the kind serves reports (a
// submit, part or tool hook, named by what in the error).
func (s *Server) hookAt(i uint32, serves func(hookEntry) bool, what string) (hookEntry, error) {
	if int(i) >= len(s.hooks) {
		return hookEntry{}, status.Errorf(codes.NotFound, "plugin %q has no hook %d", s.p.Name, i)
	}
	h := s.hooks[i]
	if !serves(h) {
		return hookEntry{}, status.Errorf(codes.InvalidArgument, "hook %q is not %s", h.spec.ID, what)
	}
	return h, nil
}

func hookError(err error, panicked bool) *abkitv1.HookError {
	if err == nil {
		return nil
	}
	if panicked {
		return &abkitv1.HookError{Kind: "error", Message: panicText(err), Panicked: true}
	}
	if reason, ok := hooks.IsReject(err); ok {
		return &abkitv1.HookError{Kind: "reject", Message: reason}
	}
	return &abkitv1.HookError{Kind: "error", Message: err.Error()}
}

// Submit implements the protocol's Submit (family H, H4).
func (s *Server) Submit(ctx context.Context, r *abkitv1.SubmitRequest) (*abkitv1.SubmitResponse, error) {
	h, err := s.hookAt(r.GetHook(), func(h hookEntry) bool { return h.submit != nil }, "a submit hook")
	if err != nil {
		return nil, err
	}
	var sub hooks.Submit
	if err := json.Unmarshal(r.GetSubmitJson(), &sub); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "decode submit: %v", err)
	}
	herr, panicked := safe(func() error { return h.submit.OnSubmit(ctx, &sub) })
	b, err := json.Marshal(&sub)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encode submit: %v", err)
	}
	return &abkitv1.SubmitResponse{SubmitJson: b, Error: hookError(herr, panicked)}, nil
}

// Part implements the protocol's Part (family H).
func (s *Server) Part(ctx context.Context, r *abkitv1.PartRequest) (*abkitv1.PartResponse, error) {
	h, err := s.hookAt(r.GetHook(), func(h hookEntry) bool { return h.part != nil }, "a part hook")
	if err != nil {
		return nil, err
	}
	b, herr, err := runHook(r.GetPartJson(), "part", "part", func(p hooks.Part) (hooks.Part, error) { return h.part.OnPart(ctx, p) })
	if err != nil {
		return nil, err
	}
	return &abkitv1.PartResponse{PartJson: b, Error: herr}, nil
}

// Tool implements the protocol's Tool (family H, H5).
func (s *Server) Tool(ctx context.Context, r *abkitv1.ToolRequest) (*abkitv1.ToolResponse, error) {
	h, err := s.hookAt(r.GetHook(), func(h hookEntry) bool { return h.tool != nil }, "a tool reactor")
	if err != nil {
		return nil, err
	}
	b, herr, err := runHook(r.GetEventJson(), "tool event", "tool decision", func(ev hooks.ToolEvent) (hooks.ToolDecision, error) { return h.tool.OnTool(ctx, ev) })
	if err != nil {
		return nil, err
	}
	return &abkitv1.ToolResponse{DecisionJson: b, Error: herr}, nil
}

// runHook is what Part and Tool share: it decodes in, runs call on it
// (catching a panic) and, unless the hook failed, encodes its result. A
// hook's failure is the HookError; err is a gRPC status for input that
// does not decode or a result that does not encode. inName and outName
// name the values in those errors.
func runHook[In, Out any](in []byte, inName, outName string, call func(In) (Out, error)) ([]byte, *abkitv1.HookError, error) {
	var v In
	if err := json.Unmarshal(in, &v); err != nil {
		return nil, nil, status.Errorf(codes.InvalidArgument, "decode %s: %v", inName, err)
	}
	var out Out
	herr, panicked := safe(func() (err error) { out, err = call(v); return err })
	if herr != nil {
		return nil, hookError(herr, panicked), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, nil, status.Errorf(codes.Internal, "encode %s: %v", outName, err)
	}
	return b, nil, nil
}

func durationNS(ns int64) time.Duration { return time.Duration(ns) }

// hostCtx gives a hook the context it would have in-process: with the
// request's deadline (deadlineNS, Unix nanoseconds; 0 when the call's own
// gRPC deadline carries it) and, when the host's request context was
// already done (ctxErr, HookRequest.ctx_err), done the same way before the
// hook runs.
func hostCtx(ctx context.Context, ctxErr string, deadlineNS int64) (context.Context, context.CancelFunc) {
	cancels := []context.CancelFunc{}
	if deadlineNS != 0 {
		var c context.CancelFunc
		ctx, c = context.WithDeadline(ctx, time.Unix(0, deadlineNS))
		cancels = append(cancels, c)
	}
	switch ctxErr {
	case "canceled":
		var c context.CancelFunc
		ctx, c = context.WithCancel(ctx)
		c()
		cancels = append(cancels, c)
	case "deadline_exceeded":
		var c context.CancelFunc
		ctx, c = context.WithDeadline(ctx, time.Now())
		cancels = append(cancels, c)
	}
	return ctx, func() {
		for _, c := range cancels {
			c()
		}
	}
}
