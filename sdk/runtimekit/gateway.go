package runtimekit

import (
	"context"
	"encoding/json"
	"fmt"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/gateway"
)

// For a runtime that hosts sdk/gateway plugins (or an adapter translating
// from them): probe plugins as gateway.Plugin values.

var exchangeKey = gateway.NewKey[uint32]("runtimekit.exchange")

// SetExchange records on ex its index in the scenario, which every probe
// call made on ex reports. Call it before the exchange's first hook.
func SetExchange(ex *gateway.Exchange, idx uint32) { gateway.SetState(ex, exchangeKey, idx) }

// ExchangeIndex is the index SetExchange recorded on ex.
func ExchangeIndex(ex *gateway.Exchange) uint32 {
	i, _ := gateway.GetState(ex, exchangeKey)
	return i
}

// Capabilities converts a probe's capabilities.
func Capabilities(c *abkitv1.Capabilities) gateway.Capabilities {
	return gateway.Capabilities{ReadsBody: c.GetReadsBody(), WritesRequestBody: c.GetWritesRequestBody(),
		WritesResponseBody: c.GetWritesResponseBody(), Requires: c.GetRequires(), RequiresAny: c.GetRequiresAny(),
		Description: c.GetDescription()}
}

// ConfigSchema decodes a probe's config schema; nil when it takes no
// configuration.
func ConfigSchema(ps *abkitv1.ProbeSpec) (*gateway.ConfigSchema, error) {
	if len(ps.GetConfigSchemaJson()) == 0 {
		return nil, nil
	}
	var cs gateway.ConfigSchema
	if err := json.Unmarshal(ps.GetConfigSchemaJson(), &cs); err != nil {
		return nil, fmt.Errorf("plugin %q: config schema: %w", ps.GetName(), err)
	}
	return &cs, nil
}

// OutcomeOf converts a gateway outcome.
func OutcomeOf(o gateway.Outcome) *abkitv1.Outcome {
	return Outcome(o.Kind.String(), o.Status, o.DeniedBy, o.Reason, o.Duration)
}

// ProbePlugin is a registered probe plugin as a gateway plugin: each hook
// is one probe call reporting what the hook sees on the exchange (its
// index, outcome, the probe's state, both bodies) and applying the reply
// (state, body writes, client cancellation, sleep, panic, the action or
// error).
type ProbePlugin struct {
	spec   *abkitv1.ProbeSpec
	probes *Probes
	caps   gateway.Capabilities
	state  gateway.Key[string]
}

// NewProbePlugin returns the probe plugin ps. Use [ProbePlugin.Plugin] for
// the gateway.Plugin with exactly the probe's declared behaviours.
func NewProbePlugin(probes *Probes, ps *abkitv1.ProbeSpec) *ProbePlugin {
	return &ProbePlugin{spec: ps, probes: probes, caps: Capabilities(ps.GetCapabilities()),
		state: gateway.NewKey[string]("probe." + ps.GetName())}
}

// Factory returns a gateway factory making a new probe plugin of ps per
// instance (the probe ignores its configuration; the suite judges it by
// the build).
func Factory(probes *Probes, ps *abkitv1.ProbeSpec) (gateway.Factory, error) {
	cs, err := ConfigSchema(ps)
	if err != nil {
		return gateway.Factory{}, err
	}
	return gateway.Factory{Name: ps.GetName(), Config: cs, New: func(json.RawMessage) (gateway.Plugin, error) {
		return NewProbePlugin(probes, ps).Plugin(), nil
	}}, nil
}

// Name is the registered name.
func (p *ProbePlugin) Name() string { return p.spec.GetName() }

// Capabilities are the probe's.
func (p *ProbePlugin) Capabilities() gateway.Capabilities { return p.caps }

// SetCapabilities replaces the capabilities the plugin declares.
func (p *ProbePlugin) SetCapabilities(c gateway.Capabilities) { p.caps = c }

// Spec is the probe's declaration.
func (p *ProbePlugin) Spec() *abkitv1.ProbeSpec { return p.spec }

// Call makes hook call hook (request, response, frame, finish; init,
// ready, shutdown with ex nil) and applies the reply but for its action or
// error, which it returns.
func (p *ProbePlugin) Call(ctx context.Context, ex *gateway.Exchange, hook string, frame []byte, last bool) *Reply {
	pc := &abkitv1.ProbeCall{Probe: p.spec.GetProbe(), Hook: hook, Frame: frame, Last: last}
	if ex != nil {
		pc.Exchange = ExchangeIndex(ex)
		if o, ok := ex.Outcome(); ok {
			pc.HasOutcome, pc.Outcome = true, OutcomeOf(o)
		}
		pc.State, pc.HasState = gateway.GetState(ex, p.state)
		if b := ex.RequestBody(); b != nil {
			pc.HasRequestBody, pc.RequestBody = true, b
		}
		if b := ex.ResponseBody(); b != nil {
			pc.HasResponseBody, pc.ResponseBody = true, b
		}
		// What the plugin sees of the request and response (P32, P33,
		// P35) and the identity so far (P36).
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
	r := p.probes.Call(ctx, pc)
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
	r.Act(ctx)
	return r
}

// Action is the reply's pipeline action, a rejection with its headers and
// body (P34) included.
func Action(r *Reply) gateway.Action {
	if _, _, ok := r.Rejects(); ok {
		return r.GetAction().Gateway()
	}
	return gateway.Continue()
}

// OnRequest calls the probe.
func (p *ProbePlugin) OnRequest(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	return Action(p.Call(ctx, ex, "request", nil, false))
}

// OnResponse calls the probe.
func (p *ProbePlugin) OnResponse(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	return Action(p.Call(ctx, ex, "response", nil, false))
}

// Optional returns the probe's declared optional behaviours as probe
// calls (the lifecycle ones as a group, see [Has]).
func (p *ProbePlugin) Optional() gateway.Optional {
	var o gateway.Optional
	if Has(p.spec, "finish") {
		o.Finish = func(ctx context.Context, ex *gateway.Exchange) error {
			return p.Call(ctx, ex, "finish", nil, false).Err()
		}
	}
	if Has(p.spec, "stream") {
		o.Frame = func(ctx context.Context, ex *gateway.Exchange, f []byte, last bool) gateway.Action {
			return Action(p.Call(ctx, ex, "frame", f, last))
		}
	}
	if Has(p.spec, "init") {
		o.Init = func(ctx context.Context) error { return p.Call(ctx, nil, "init", nil, false).Err() }
		o.Shutdown = func(ctx context.Context) error { return p.Call(ctx, nil, "shutdown", nil, false).Err() }
		o.Ready = func(ctx context.Context) error { return p.Call(ctx, nil, "ready", nil, false).Err() }
	}
	return o
}

// Plugin returns p with exactly its declared behaviours.
func (p *ProbePlugin) Plugin() gateway.Plugin { return gateway.Compose(p, p.Optional()) }
