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
)

// probeExt is an extension backed by a probe.
type probeExt struct {
	id  uint32
	c   abkitv1.ProbeClient
	bug Bug
}

// walkEndedKey carries, per dispatch, whether a bug ended the walk.
type walkEndedKey struct{}

func (e probeExt) Call(ctx context.Context, point intercept.Point, payload json.RawMessage) (intercept.Answer, error) {
	ended, _ := ctx.Value(walkEndedKey{}).(*atomic.Bool)
	if e.bug == "allow-honoured-at-tool-before" && ended != nil && ended.Load() {
		return intercept.Answer{Decision: intercept.DecisionContinue}, nil // the walk "ended" at an allow
	}
	r := call(ctx, e.c, &abkitv1.ProbeCall{Probe: e.id, Hook: "intercept", Point: string(point), PayloadJson: payload})
	sleep(r)
	if r.GetPanic() {
		panic(fmt.Sprintf("probe extension %d panicked", e.id))
	}
	if err := replyErr(r); err != nil {
		return intercept.Answer{}, err
	}
	d := intercept.Decision(r.GetDecision())
	if e.bug == "allow-outside-perm" && point != intercept.PermissionDecision && (d == intercept.DecisionAllow || d == intercept.DecisionDeny) {
		d = intercept.DecisionContinue // Bug (D9): allow/deny outside permission.decision accepted.
	}
	if e.bug == "allow-honoured-at-tool-before" && point == intercept.ToolBefore && d == intercept.DecisionAllow && ended != nil {
		// Bug (D9): allow is honoured at tool.before: the walk ends there,
		// no violation. The dispatcher would flag it, so the harness
		// answers continue and skips every later call of the dispatch.
		ended.Store(true)
		d = intercept.DecisionContinue
	}
	repl := r.GetReplacementJson()
	if e.bug == "unknown-field-accepted" && d == intercept.DecisionReplace {
		// Bug (D8): replacements are decoded leniently: unknown fields are
		// ignored instead of being a violation (the dispatcher decodes
		// strictly, so the harness hands it the lenient re-encoding).
		if _, err := intercept.DecodeStrict(point, repl); err != nil {
			if v := intercept.PayloadFor(point); v != nil && json.Unmarshal(repl, v) == nil {
				if b, err := json.Marshal(v); err == nil {
					repl = b
				}
			}
		}
	}
	return intercept.Answer{Decision: d, Reason: r.GetReason(), Replacement: repl}, nil
}

func (e probeExt) Notify(point intercept.Point, payload json.RawMessage) error {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	r, err := e.c.Call(ctx, &abkitv1.ProbeCall{Probe: e.id, Hook: "notify", Point: string(point), PayloadJson: payload})
	if err != nil {
		return err
	}
	sleep(r) // a slow observer holds up event delivery (D20)
	return replyErr(r)
}

func manifestFrom(m *abkitv1.Manifest) intercept.Manifest {
	out := intercept.Manifest{PluginID: m.GetPluginId(), Required: m.GetRequired(), Priority: int(m.GetPriority()),
		Slots: m.GetSlots(), Timeout: time.Duration(m.GetTimeoutNs())}
	for _, p := range m.GetPoints() {
		out.Points = append(out.Points, intercept.Point(p))
	}
	return out
}

// RunIntercept builds a dispatcher of the scenario's extensions and
// dispatches its payload, repeat times concurrently. It closes the
// dispatcher (delivering every event) before answering.
func (s *Server) RunIntercept(ctx context.Context, sc *abkitv1.InterceptScenario) (*abkitv1.InterceptRun, error) {
	pc, err := s.probes(sc.GetBrokerId())
	if err != nil {
		return nil, err
	}
	var contribs []dispatch.Contribution
	owned := map[string]bool{}
	for _, es := range sc.GetExtensions() {
		m := manifestFrom(es.GetManifest())
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
		contribs = append(contribs, dispatch.Contribution{Manifest: m, Extension: probeExt{id: es.GetProbe(), c: pc, bug: s.opts.Bug}})
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
	d, err := dispatch.New(contribs, dispatch.Options{OnWarning: onWarn, CloseTimeout: time.Hour})
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
			res, err := d.Dispatch(dctx, dispatch.Request{Point: intercept.Point(sc.GetPoint()),
				Payload: json.RawMessage(sc.GetPayloadJson()), Provider: sc.GetProvider()})
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
				if s.opts.Alt == "warnings-callback-only" {
					out.Warnings = nil // Alternative (D13): warnings go to the callback only.
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

// probeHook is a family H hook backed by a probe.
type probeHook struct {
	id   uint32
	spec hooks.Spec
	c    abkitv1.ProbeClient
	bug  Bug
}

func (h probeHook) Spec() hooks.Spec { return h.spec }

func (h probeHook) call(ctx context.Context, hook string, v any) (*abkitv1.ProbeReply, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	r := call(ctx, h.c, &abkitv1.ProbeCall{Probe: h.id, Hook: hook, ValueJson: b})
	sleep(r)
	if r.GetPanic() {
		panic(fmt.Sprintf("probe hook %s panicked", h.spec.ID))
	}
	if x := r.GetReject(); x != "" {
		return nil, hooks.Reject(x)
	}
	return r, replyErr(r)
}

func (h probeHook) OnSubmit(ctx context.Context, s *hooks.Submit) error {
	r, err := h.call(ctx, "submit", s)
	if err != nil {
		return err
	}
	if b := r.GetValueJson(); len(b) > 0 {
		var ns hooks.Submit
		if err := json.Unmarshal(b, &ns); err != nil {
			return fmt.Errorf("probe submit value: %w", err)
		}
		*s = ns
	}
	return nil
}

func (h probeHook) OnPart(ctx context.Context, p hooks.Part) (hooks.Part, error) {
	r, err := h.call(ctx, "part", p)
	if err != nil {
		return p, err
	}
	if b := r.GetValueJson(); len(b) > 0 {
		var np hooks.Part
		if err := json.Unmarshal(b, &np); err != nil {
			return p, fmt.Errorf("probe part value: %w", err)
		}
		return np, nil
	}
	return p, nil
}

func (h probeHook) OnTool(ctx context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
	r, err := h.call(ctx, "tool", ev)
	if err != nil {
		return hooks.ToolDecision{}, err
	}
	var d hooks.ToolDecision
	if b := r.GetValueJson(); len(b) > 0 {
		if err := json.Unmarshal(b, &d); err != nil {
			return hooks.ToolDecision{}, fmt.Errorf("probe tool decision: %w", err)
		}
	}
	if h.bug == "swallow-continues" && d.Kind == hooks.DecisionSwallow {
		d = hooks.ToolDecision{} // Bug (H5): swallow does not stop the chain.
	}
	return d, nil
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
func (s *Server) RunHooks(ctx context.Context, sc *abkitv1.HookScenario) (*abkitv1.HookRun, error) {
	pc, err := s.probes(sc.GetBrokerId())
	if err != nil {
		return nil, err
	}
	cfg := hookbus.Config{ToolPolicy: hooks.Policy(sc.GetToolPolicy())}
	for _, hs := range sc.GetHooks() {
		sp := hs.GetHook()
		spec := hooks.Spec{ID: sp.GetId(), Order: int(sp.GetOrder()), Policy: hooks.Policy(sp.GetPolicy()), Kind: hooks.Kind(sp.GetKind())}
		if s.opts.Bug == "unspecified-fail-open" && spec.Policy == "" && spec.Kind != hooks.KindTool {
			spec.Policy = hooks.PolicyFailOpen // Bug (H3).
		}
		h := probeHook{id: hs.GetProbe(), spec: spec, c: pc, bug: s.opts.Bug}
		switch spec.Kind {
		case hooks.KindSubmit:
			cfg.Submit = append(cfg.Submit, h)
		case hooks.KindTool:
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
