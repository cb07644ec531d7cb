package refruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abkit/abkit/internal/dispatch"
	"github.com/abkit/abkit/internal/hookbus"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
	"github.com/abkit/abkit/sdk/runtimekit"
)

// probeExt is the kit's probe extension with the bugs injected around
// its answers.
type probeExt struct {
	runtimekit.ProbeExtension
	bug Bug
}

// walkEndedKey carries, per dispatch, whether a bug ended the walk.
type walkEndedKey struct{}

func (e probeExt) Call(ctx context.Context, point intercept.Point, payload json.RawMessage) (intercept.Answer, error) {
	ended, _ := ctx.Value(walkEndedKey{}).(*atomic.Bool)
	if e.bug == "allow-honoured-at-tool-before" && ended != nil && ended.Load() {
		return intercept.Answer{Decision: intercept.DecisionContinue}, nil // the walk "ended" at an allow
	}
	a, err := e.ProbeExtension.Call(ctx, point, payload)
	if err != nil {
		return a, err
	}
	if e.bug == "allow-outside-perm" && point != intercept.PermissionDecision && (a.Decision == intercept.DecisionAllow || a.Decision == intercept.DecisionDeny) {
		a.Decision = intercept.DecisionContinue // Bug (D9): allow/deny outside permission.decision accepted.
	}
	if e.bug == "allow-honoured-at-tool-before" && point == intercept.ToolBefore && a.Decision == intercept.DecisionAllow && ended != nil {
		// Bug (D9): allow is honoured at tool.before: the walk ends there,
		// no violation. The dispatcher would flag it, so the harness
		// answers continue and skips every later call of the dispatch.
		ended.Store(true)
		a.Decision = intercept.DecisionContinue
	}
	if e.bug == "unknown-field-accepted" && a.Decision == intercept.DecisionReplace {
		// Bug (D8): replacements are decoded leniently: unknown fields are
		// ignored instead of being a violation (the dispatcher decodes
		// strictly, so the harness hands it the lenient re-encoding).
		if _, err := intercept.DecodeStrict(point, a.Replacement); err != nil {
			if v := intercept.PayloadFor(point); v != nil && json.Unmarshal(a.Replacement, v) == nil {
				if b, err := json.Marshal(v); err == nil {
					a.Replacement = b
				}
			}
		}
	}
	return a, nil
}

// RunIntercept builds a dispatcher of the scenario's extensions and
// dispatches its payload, repeat times concurrently. It closes the
// dispatcher (delivering every event) before answering.
func (s *Server) runIntercept(ctx context.Context, sc runtimekit.InterceptScenario) (*abkitv1.InterceptRun, error) {
	var contribs []dispatch.Contribution
	owned := map[string]bool{}
	ids := map[string]bool{}
	for _, es := range sc.GetExtensions() {
		m := runtimekit.Manifest(es.GetManifest())
		switch s.opts.Alt {
		case "one-extension-per-id":
			// Alternative (D4): one extension per plugin ID.
			if m.PluginID != "" && ids[m.PluginID] {
				return &abkitv1.InterceptRun{BuildError: fmt.Sprintf("plugin ID %q is registered twice; one extension per plugin ID", m.PluginID)}, nil
			}
			ids[m.PluginID] = true
		case "specific-slots-replace-target":
			// Alternative (D19): a tool: or provider: claim replaces the
			// target itself, so it has no strategy phase here; an invalid
			// name is still refused by the build.
			var keep []string
			for _, sl := range m.Slots {
				if parsed, err := intercept.ParseSlot(sl); err != nil || (parsed.Kind != intercept.SlotTool && parsed.Kind != intercept.SlotProvider) {
					keep = append(keep, sl)
				}
			}
			m.Slots = keep
		}
		switch s.opts.Bug {
		case "optional-fatal":
			m.Required = true // Bug (D13): every failure is fatal.
		case "no-strategy":
			m.Slots = nil // Bug (D19): slot owners never rule.
		case "second-owner-accepted":
			var keep []string // Bug (D18): a second claim is dropped silently.
			for _, sl := range m.Slots {
				if !owned[sl] {
					owned[sl] = true
					keep = append(keep, sl)
				}
			}
			m.Slots = keep
		}
		contribs = append(contribs, dispatch.Contribution{Manifest: m, Extension: probeExt{ProbeExtension: runtimekit.ProbeExtension{Probe: es.GetProbe(), Probes: sc.Probes}, bug: s.opts.Bug}})
	}
	run := &abkitv1.InterceptRun{}
	var wmu sync.Mutex
	onWarn := func(w dispatch.Warning) {
		wmu.Lock()
		defer wmu.Unlock()
		f := &abkitv1.ExtensionFailure{Extension: w.Extension, Point: string(w.Point), Kind: string(w.Kind), Message: w.Message}
		if s.opts.Alt == "notify-fire-and-forget" && w.Kind == dispatch.KindEventFail {
			return // Alternative (D20): a notification has no reply to fail.
		}
		run.Warnings = append(run.Warnings, f)
		if s.opts.Bug == "warn-twice" {
			run.Warnings = append(run.Warnings, f) // Bug (D15).
		}
	}
	// Close delivers every queued event through the probes; on a busy
	// machine that can outlast dispatch's default 5 s bound while making
	// progress, so the bound is the caller's deadline (CloseContext below).
	d, err := dispatch.New(contribs, dispatch.Options{OnWarning: onWarn, CloseTimeout: time.Hour,
		HostTypeOnly: s.opts.Alt == "host-type-only"}) // Alternative (D2): the type only.
	if err != nil {
		run.BuildError = err.Error()
		return run, nil
	}
	n := max(int(sc.GetRepeat()), 1)
	run.Results = make([]*abkitv1.InterceptResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			dctx := context.WithValue(ctx, walkEndedKey{}, new(atomic.Bool))
			var payload any = json.RawMessage(sc.GetPayloadJson())
			if s.opts.Alt == "re-encoded-payloads" {
				// Alternative (D11): extensions get the host's typed value
				// re-encoded; the host still keeps its own bytes.
				if v, err := intercept.DecodeStrict(intercept.Point(sc.GetPoint()), sc.GetPayloadJson()); err == nil {
					payload = v
				}
			}
			res, err := d.Dispatch(dctx, dispatch.Request{Point: intercept.Point(sc.GetPoint()), Payload: payload, Provider: sc.GetProvider()})
			if _, typed := payload.(intercept.Payload); typed && err == nil && !res.Changed {
				res.Payload = sc.GetPayloadJson()
			}
			out := &abkitv1.InterceptResult{}
			var ee *dispatch.ExtensionError
			switch {
			case errors.As(err, &ee):
				out.Failure = &abkitv1.ExtensionFailure{Extension: ee.Extension, Point: string(ee.Point), Phase: ee.Phase, Kind: string(ee.Kind), Message: ee.Error()}
			case err != nil:
				out.Error = err.Error()
			default:
				out.PayloadJson, out.Changed, out.Replaced = res.Payload, res.Changed, res.Replaced
				out.Blocked, out.BlockedBy, out.BlockPhase, out.Reason = res.Blocked, res.BlockedBy, res.BlockPhase, res.Reason
				out.Permission, out.DecidedBy, out.Notes, out.Warnings = string(res.Permission), res.DecidedBy, res.Notes, res.Warnings
				switch s.opts.Alt {
				case "warnings-callback-only":
					out.Warnings = nil // Alternative (D13): warnings go to the callback only.
				case "blocker-unnamed":
					out.BlockedBy, out.BlockPhase = "", "" // Alternative (D7): the reason only.
				case "decider-unnamed":
					out.DecidedBy = "" // Alternative (D9): the ruling only.
				}
			}
			run.Results[i] = out
		})
	}
	wg.Wait()
	if err := d.CloseContext(ctx); err != nil {
		return nil, fmt.Errorf("close the dispatcher: %w", err)
	}
	return run, nil
}

// swallowIgnored is the kit's probe hook with bug H5: a swallow does not
// stop the chain.
type swallowIgnored struct{ runtimekit.ProbeHook }

func (h swallowIgnored) OnTool(ctx context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
	d, err := h.ProbeHook.OnTool(ctx, ev)
	if err == nil && d.Kind == hooks.DecisionSwallow {
		d = hooks.ToolDecision{} // Bug (H5): swallow does not stop the chain.
	}
	return d, err
}

func failure(err error) *abkitv1.HookFailure {
	if reason, ok := hooks.IsReject(err); ok {
		var re *hooks.RejectError
		errors.As(err, &re)
		return &abkitv1.HookFailure{Hook: re.Hook, Kind: "reject", Message: reason}
	}
	f := &abkitv1.HookFailure{Kind: "error", Message: err.Error()}
	var he *hookbus.HookError
	if errors.As(err, &he) {
		f.Hook = he.Hook
		var pe *hookbus.PanicError
		if errors.As(err, &pe) {
			f.Kind = "panic"
		}
	}
	return f
}

// RunHooks builds a hook bus of the scenario's hooks and runs one chain.
func (s *Server) runHooks(ctx context.Context, sc runtimekit.HookScenario) (*abkitv1.HookRun, error) {
	cfg := hookbus.Config{ToolPolicy: hooks.Policy(sc.GetToolPolicy()),
		KeepFailed:    s.opts.Alt == "keep-failed-changes",       // Alternative (H2): no rollback.
		IgnoreInvalid: s.opts.Alt == "invalid-reactions-ignored"} // Alternative (H6).
	for _, hs := range sc.GetHooks() {
		h := runtimekit.NewProbeHook(sc.Probes, hs)
		if s.opts.Bug == "unspecified-fail-open" && h.Hook.Policy == "" && h.Hook.Kind != hooks.KindTool {
			h.Hook.Policy = hooks.PolicyFailOpen // Bug (H3).
		}
		switch h.Hook.Kind {
		case hooks.KindSubmit:
			cfg.Submit = append(cfg.Submit, h)
		case hooks.KindTool:
			if s.opts.Bug == "swallow-continues" {
				cfg.Tools = append(cfg.Tools, swallowIgnored{h})
				continue
			}
			cfg.Tools = append(cfg.Tools, h)
		default:
			cfg.Parts = append(cfg.Parts, h)
		}
	}
	run := &abkitv1.HookRun{}
	bus, err := hookbus.New(cfg)
	if err != nil {
		run.BuildError = err.Error()
		return run, nil
	}
	var out any
	var errs []error
	in := sc.GetInputJson()
	switch hooks.Kind(sc.GetKind()) {
	case hooks.KindSubmit:
		var v hooks.Submit
		if err = json.Unmarshal(in, &v); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		var res hookbus.SubmitResult
		res, err = bus.RunSubmit(ctx, &v)
		out, errs = res.Submit, res.Errors
	case hooks.KindRequestPart, hooks.KindResponsePart:
		var v hooks.Part
		if err = json.Unmarshal(in, &v); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		var res hookbus.PartResult
		res, err = bus.RunPart(ctx, hooks.Kind(sc.GetKind()), v)
		out, errs = res.Part, res.Errors
	case hooks.KindTool:
		var v hooks.ToolEvent
		if err = json.Unmarshal(in, &v); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		var res hookbus.ToolResult
		res, err = bus.RunTool(ctx, v)
		out, errs = res.Event, res.Errors
		run.Swallowed, run.SwallowedBy = res.Swallowed, res.SwallowedBy
	default:
		return nil, fmt.Errorf("unknown hook kind %q", sc.GetKind())
	}
	if err != nil {
		run.Failure = failure(err)
	} else if b, merr := json.Marshal(out); merr == nil {
		run.OutputJson = b
	}
	for _, e := range errs {
		run.Errors = append(run.Errors, failure(e))
	}
	return run, nil
}
