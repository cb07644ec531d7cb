package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/abkit/abkit/internal/hookbus"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// Manifest returns the plugin's family D manifest; ok is false when it
// serves no extension.
func (p *Plugin) Manifest() (m intercept.Manifest, ok bool) {
	pm := p.desc.GetExtension()
	if pm == nil {
		return intercept.Manifest{}, false
	}
	m = intercept.Manifest{PluginID: pm.GetPluginId(), Required: pm.GetRequired(), Priority: int(pm.GetPriority()),
		Timeout: time.Duration(pm.GetTimeoutNs())}
	if len(pm.GetSlots()) > 0 {
		m.Slots = append([]string(nil), pm.GetSlots()...)
	}
	for _, pt := range pm.GetPoints() {
		m.Points = append(m.Points, intercept.Point(pt))
	}
	return m, true
}

// Extension returns the plugin as an intercept.Extension for the
// dispatcher. Calls return an error wrapping intercept.ErrNoProcess once the
// process is gone (D13).
func (p *Plugin) Extension() intercept.Extension { return extension{p} }

type extension struct{ p *Plugin }

func (e extension) err(call string, err error) error {
	ce := e.p.callErr(call, err)
	var c *CallError
	if errors.As(ce, &c) && c.Exited {
		return fmt.Errorf("%w: %w", intercept.ErrNoProcess, ce)
	}
	return ce
}

// Call implements intercept.Extension. ctx's deadline (the point's budget,
// D3) bounds the call, and so does the host's call timeout.
func (e extension) Call(ctx context.Context, point intercept.Point, payload json.RawMessage) (intercept.Answer, error) {
	if e.p.Exited() {
		return intercept.Answer{}, fmt.Errorf("plugin %q: intercept %s: %w", e.p.name, point, intercept.ErrNoProcess)
	}
	cctx, cancel := e.p.callCtx(ctx)
	defer cancel()
	r, err := e.p.rpc.Intercept(cctx, &abkitv1.InterceptRequest{Point: string(point), PayloadJson: payload})
	if err != nil {
		return intercept.Answer{}, e.err("intercept "+string(point), err)
	}
	if r.GetError() != "" {
		return intercept.Answer{}, errors.New(r.GetError())
	}
	a := intercept.Answer{Decision: intercept.Decision(r.GetDecision()), Reason: r.GetReason()}
	if len(r.GetReplacementJson()) > 0 {
		a.Replacement = r.GetReplacementJson()
	}
	return a, nil
}

// Notify implements intercept.Extension (D20), bounded by the call timeout.
func (e extension) Notify(point intercept.Point, payload json.RawMessage) error {
	if e.p.Exited() {
		return fmt.Errorf("plugin %q: notify %s: %w", e.p.name, point, intercept.ErrNoProcess)
	}
	ctx, cancel := e.p.callCtx(context.Background())
	defer cancel()
	st, err := e.p.rpc.Notify(ctx, &abkitv1.NotifyRequest{Point: string(point), PayloadJson: payload})
	if err != nil {
		return e.err("notify "+string(point), err)
	}
	if st.GetError() != "" {
		return errors.New(st.GetError())
	}
	return nil
}

// Hooks returns the plugin's family H hooks as ordinary hooks, in the order
// the plugin declared them. A failed call is an error (handled by the hook's
// policy); a panic in the plugin is a *hookbus.PanicError holding a
// *RemotePanic and the plugin's stack, the error the bus makes of an
// in-process panic, so the bus treats both alike without a panic crossing
// the host.
func (p *Plugin) Hooks() (submit []hooks.SubmitHook, parts []hooks.PartHook, tools []hooks.ToolReactor) {
	for _, h := range p.desc.GetHooks() {
		rh := remoteHook{p: p, index: h.GetIndex(), spec: hooks.Spec{ID: h.GetId(), Order: int(h.GetOrder()),
			Policy: hooks.Policy(h.GetPolicy()), Kind: hooks.Kind(h.GetKind())}}
		switch rh.spec.Kind {
		case hooks.KindSubmit:
			submit = append(submit, submitHook{rh})
		case hooks.KindRequestPart, hooks.KindResponsePart:
			parts = append(parts, partHook{rh})
		case hooks.KindTool:
			tools = append(tools, toolHook{rh})
		}
	}
	return submit, parts, tools
}

type remoteHook struct {
	p     *Plugin
	index uint32
	spec  hooks.Spec
}

func (h remoteHook) Spec() hooks.Spec { return h.spec }

func (h remoteHook) failure(e *abkitv1.HookError) error {
	switch {
	case e == nil:
		return nil
	case e.GetPanicked():
		rp := splitPanic(h.spec.ID, e.GetMessage())
		return &hookbus.PanicError{Value: rp, Stack: []byte(rp.Stack)}
	case e.GetKind() == "reject":
		return hooks.Reject(e.GetMessage())
	}
	return errors.New(e.GetMessage())
}

type submitHook struct{ remoteHook }

func (h submitHook) OnSubmit(ctx context.Context, s *hooks.Submit) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode submit: %w", err)
	}
	cctx, cancel := h.p.callCtx(ctx)
	defer cancel()
	r, err := h.p.rpc.Submit(cctx, &abkitv1.SubmitRequest{Hook: h.index, SubmitJson: b})
	if err != nil {
		return h.p.callErr("submit hook "+h.spec.ID, err)
	}
	// The hook may have changed the submit in place, also before failing,
	// as an in-process hook can.
	var out hooks.Submit
	if err := json.Unmarshal(r.GetSubmitJson(), &out); err != nil {
		return fmt.Errorf("plugin %q: submit hook %s: decode answer: %w", h.p.name, h.spec.ID, err)
	}
	*s = out
	return h.failure(r.GetError())
}

type partHook struct{ remoteHook }

func (h partHook) OnPart(ctx context.Context, p hooks.Part) (hooks.Part, error) {
	send := func(ctx context.Context, b []byte) (*abkitv1.PartResponse, error) {
		return h.p.rpc.Part(ctx, &abkitv1.PartRequest{Hook: h.index, PartJson: b})
	}
	return callHook[hooks.Part](ctx, h.remoteHook, "part hook", "part", p, send, (*abkitv1.PartResponse).GetPartJson)
}

type toolHook struct{ remoteHook }

func (h toolHook) OnTool(ctx context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
	send := func(ctx context.Context, b []byte) (*abkitv1.ToolResponse, error) {
		return h.p.rpc.Tool(ctx, &abkitv1.ToolRequest{Hook: h.index, EventJson: b})
	}
	return callHook[hooks.ToolDecision](ctx, h.remoteHook, "tool reactor", "tool event", ev, send, (*abkitv1.ToolResponse).GetDecisionJson)
}

// callHook sends in, as JSON, to the hook h is (a role, "part hook", and
// what it sends, "part", name them in errors) through rpc, and decodes the
// answer of the reply into an Out. A failure the reply reports is the
// hook's error; the answer is then not read. Unlike a submit hook, these
// return a new value rather than change theirs in place.
func callHook[Out, In any, R interface{ GetError() *abkitv1.HookError }](ctx context.Context, h remoteHook, role, what string, in In, rpc func(context.Context, []byte) (R, error), answer func(R) []byte) (Out, error) {
	var zero Out
	b, err := json.Marshal(in)
	if err != nil {
		return zero, fmt.Errorf("encode %s: %w", what, err)
	}
	cctx, cancel := h.p.callCtx(ctx)
	defer cancel()
	r, err := rpc(cctx, b)
	if err != nil {
		return zero, h.p.callErr(role+" "+h.spec.ID, err)
	}
	if err := h.failure(r.GetError()); err != nil {
		return zero, err
	}
	var out Out
	if err := json.Unmarshal(answer(r), &out); err != nil {
		return zero, fmt.Errorf("plugin %q: %s %s: decode answer: %w", h.p.name, role, h.spec.ID, err)
	}
	return out, nil
}

func specOf(h *abkitv1.HookSpec) hooks.Spec {
	return hooks.Spec{ID: h.GetId(), Order: int(h.GetOrder()), Policy: hooks.Policy(h.GetPolicy()), Kind: hooks.Kind(h.GetKind())}
}
