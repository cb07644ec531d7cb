package runtimekit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// Manifest converts a probe extension's manifest.
func Manifest(m *abkitv1.Manifest) intercept.Manifest {
	out := intercept.Manifest{PluginID: m.GetPluginId(), Required: m.GetRequired(), Priority: int(m.GetPriority()),
		Slots: m.GetSlots(), Timeout: time.Duration(m.GetTimeoutNs())}
	for _, p := range m.GetPoints() {
		out.Points = append(out.Points, intercept.Point(p))
	}
	return out
}

// ProbeExtension is a probe extension as an intercept.Extension: Call is
// one "intercept" probe call (the reply's sleep and panic acted out, its
// error returned, else its decision, reason and replacement); Notify is
// one "notify" call, which a slow observer holds up.
type ProbeExtension struct {
	Probe  uint32
	Probes *Probes
}

// Call calls the probe.
func (e ProbeExtension) Call(ctx context.Context, point intercept.Point, payload json.RawMessage) (intercept.Answer, error) {
	r := e.Probes.Call(ctx, &abkitv1.ProbeCall{Probe: e.Probe, Hook: "intercept", Point: string(point), PayloadJson: payload})
	r.Act(ctx)
	if err := r.Err(); err != nil {
		return intercept.Answer{}, err
	}
	return intercept.Answer{Decision: intercept.Decision(r.GetDecision()), Reason: r.GetReason(), Replacement: r.GetReplacementJson()}, nil
}

// Notify delivers an event to the probe.
func (e ProbeExtension) Notify(point intercept.Point, payload json.RawMessage) error {
	r, err := e.Probes.Notify(&abkitv1.ProbeCall{Probe: e.Probe, Hook: "notify", Point: string(point), PayloadJson: payload})
	if err != nil {
		return err
	}
	if n := r.GetSleepNs(); n > 0 {
		time.Sleep(time.Duration(n))
	}
	return r.Err()
}

// HookSpec converts a probe hook's spec.
func HookSpec(s *abkitv1.HookSpec) hooks.Spec {
	return hooks.Spec{ID: s.GetId(), Order: int(s.GetOrder()), Policy: hooks.Policy(s.GetPolicy()), Kind: hooks.Kind(s.GetKind())}
}

// ProbeHook is a probe hook as an sdk/hooks hook: a SubmitHook, PartHook
// and ToolReactor at once (register it by Hook.Kind). Each call sends the
// value as JSON and takes the probe's value back; a rejection is
// hooks.Reject.
type ProbeHook struct {
	Probe  uint32
	Hook   hooks.Spec
	Probes *Probes
}

// NewProbeHook returns the probe hook ps.
func NewProbeHook(probes *Probes, ps *abkitv1.ProbeSpec) ProbeHook {
	return ProbeHook{Probe: ps.GetProbe(), Hook: HookSpec(ps.GetHook()), Probes: probes}
}

// Spec is the hook's spec.
func (h ProbeHook) Spec() hooks.Spec { return h.Hook }

// call sends v and decodes the probe's value, if any, into out.
func (h ProbeHook) call(ctx context.Context, hook string, v, out any, apply func()) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	r := h.Probes.Call(ctx, &abkitv1.ProbeCall{Probe: h.Probe, Hook: hook, ValueJson: b})
	// The value is applied before the reply's error or panic, as a hook
	// that changed its value in place and then failed leaves it: whether
	// that change is kept is the bus's to decide (choice H2.rollback).
	if vb := r.GetValueJson(); len(vb) > 0 {
		if err := json.Unmarshal(vb, out); err != nil {
			return fmt.Errorf("probe hook %s: %s value: %w", h.Hook.ID, hook, err)
		}
		apply()
	}
	r.Act(ctx)
	if x := r.GetReject(); x != "" {
		return hooks.Reject(x)
	}
	return r.Err()
}

// OnSubmit calls the probe; its value replaces *s.
func (h ProbeHook) OnSubmit(ctx context.Context, s *hooks.Submit) error {
	var ns hooks.Submit
	return h.call(ctx, "submit", s, &ns, func() { *s = ns })
}

// OnPart calls the probe; its value is the part after the hook, also
// when the hook then fails.
func (h ProbeHook) OnPart(ctx context.Context, p hooks.Part) (hooks.Part, error) {
	var np hooks.Part
	out := p
	err := h.call(ctx, "part", p, &np, func() { out = np })
	return out, err
}

// OnTool calls the probe; its value is the decision.
func (h ProbeHook) OnTool(ctx context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
	var d hooks.ToolDecision
	if err := h.call(ctx, "tool", ev, &d, func() {}); err != nil {
		return hooks.ToolDecision{}, err
	}
	return d, nil
}
