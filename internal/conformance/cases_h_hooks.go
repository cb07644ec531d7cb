package conformance

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/abkit/abkit/internal/hookbus"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/hooks"
)

// addHooksCases registers the cases of family H hooks: their specs and
// what submit hooks, tool reactors and part hooks answer (H1-H6).
func addHooksCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "H1/spec/valid", Rules: []string{"H1", "H3"},
			Summary: "every hook declares an ID, a known kind and a hook policy",
			Explain: `Checks each hook spec the plugin declares: a non-empty ID (it names
the hook in errors and traces and breaks order ties, H1), a known kind,
and a policy a single hook may declare: empty (fail-closed, H3),
fail-open or fail-closed; swallow is a bus-level tool policy only.
Fix: correct the hooks.Spec values.`,
			Applies: needFamily(family.Hooks),
			Run:     h1SpecValid,
		},
		{
			ID: "H4/submit/reject-has-reason", Rules: []string{"H4", "H2", "H3"},
			Summary: "submit hooks continue or reject with a reason, without failing",
			Explain: `Runs the plugin's submit hooks through the reference hook bus on
sample submits (plain, empty, a long conversation, a suspicious model).
Each must either continue or reject; a rejection must carry a reason the
caller can show (H4). A hook failure (error or panic) is not a decision.
Fix: return hooks.Reject("why") to reject; return nil otherwise.`,
			Applies: needSubmitHook,
			Run:     h4SubmitRejectHasReason,
		},
		{
			ID: "H5/tool/decisions-valid", Rules: []string{"H5", "H6"},
			Summary: "tool reactors answer pass, rewrite, replace or swallow, with valid events",
			Explain: `Calls each tool reactor with sample start and result events and applies
its decision as the bus does (H5): a known kind; a rewrite naming known
fields with values of the right type; a replace carrying an event; the
resulting event valid. An invalid decision is handled by the bus's error
policy (H6), so it is a failure here.
Fix: build decisions with hooks.Pass, Rewrite, Replace or Swallow and
keep phase, call_id and name set.`,
			Applies: needToolHook,
			Run:     h5ToolDecisionsValid,
		},
		{
			ID: "H2/part/returns-part", Rules: []string{"H2", "H3"},
			Summary: "part hooks return a part without failing",
			Explain: `Runs each part hook through the reference bus on sample request parts
or response events. The hook must return without error or panic (a
failure is handled by its policy, H2/H3, and loses the hook's change).
Fix: treat unknown part types as pass-through.`,
			Applies: needPartHook,
			Run:     h2PartReturnsPart,
		},
	} {
		r.Add(c)
	}
}

func h1SpecValid(t *T) {
	d := t.Describe()
	if len(d.Hooks) == 0 {
		t.Errorf("H1", "the descriptor lists family H but declares no hook")
	}
	for i, s := range d.Hooks {
		if err := s.Validate(); err != nil {
			t.Errorf("H1", "hook %d (%q): %v", i, s.ID, err)
		}
	}
}

func h4SubmitRejectHasReason(t *T) {
	hs := t.Subject().Plugin().Hooks
	for _, h := range hs.Submit {
		bus, err := newBus(hooks.KindSubmit, h, nil, nil)
		if err != nil {
			t.Fatalf("H1", "the reference bus refused hook %q: %v", h.Spec().ID, err)
		}
		for _, s := range sampleSubmits() {
			res, err := bus.WithRecorder(t.rec).RunSubmit(t.Context(), s.Clone())
			for _, fe := range res.Errors {
				// H2: under fail-open the bus records the failure and
				// goes on, so the error shows only in the result.
				t.Errorf("H2", "hook %q failed on model %q (recorded by the fail-open bus, its change lost): %v", h.Spec().ID, s.Model, fe)
			}
			if reason, ok := hooks.IsReject(err); ok {
				if reason == "" {
					t.Errorf("H4", "hook %q rejected model %q without a reason", h.Spec().ID, s.Model)
				}
				continue
			}
			if err != nil {
				t.Errorf("H3", "hook %q failed on model %q: %v", h.Spec().ID, s.Model, err)
			}
		}
	}
}

func h5ToolDecisionsValid(t *T) {
	for _, h := range t.Subject().Plugin().Hooks.Tools {
		for _, ev := range sampleToolEvents() {
			ctx, cancel := context.WithTimeout(t.Context(), HookBudget)
			d, err := safeTool(ctx, h, ev.Clone())
			cancel()
			if err != nil {
				t.Errorf("H6", "reactor %q failed on %s %s: %v", h.Spec().ID, ev.Phase, ev.Name, err)
				continue
			}
			if _, _, err := d.Apply(ev); err != nil {
				t.Errorf("H5", "reactor %q on %s %s: %v", h.Spec().ID, ev.Phase, ev.Name, err)
			}
		}
	}
}

func h2PartReturnsPart(t *T) {
	for _, h := range t.Subject().Plugin().Hooks.Parts {
		bus, err := newBus(h.Spec().Kind, nil, h, nil)
		if err != nil {
			t.Fatalf("H1", "the reference bus refused hook %q: %v", h.Spec().ID, err)
		}
		for i, data := range []string{`{"type":"text","text":"hello"}`, `{"delta":{"text":"x"}}`, `null`} {
			p := hooks.Part{Index: i, Type: "message", Data: json.RawMessage(data)}
			res, err := bus.WithRecorder(t.rec).RunPart(t.Context(), h.Spec().Kind, p)
			if err != nil {
				t.Errorf("H3", "hook %q failed on part %s: %v", h.Spec().ID, data, err)
			}
			for _, fe := range res.Errors {
				t.Errorf("H2", "hook %q failed on part %s (recorded by the fail-open bus, its change lost): %v", h.Spec().ID, data, fe)
			}
		}
	}
}

func needHookKind(d *Reported, k hooks.Kind) string {
	if r := needFamily(family.Hooks)(d); r != "" {
		return r
	}
	for _, s := range d.Hooks {
		if s.Kind == k {
			return ""
		}
	}
	return fmt.Sprintf("the plugin declares no %s hook", k)
}

// needSubmitHook applies a case to a plugin declaring a submit hook.
func needSubmitHook(d *Reported) string {
	return needHookKind(d, hooks.KindSubmit)
}

// needToolHook applies a case to a plugin declaring a tool reactor.
func needToolHook(d *Reported) string {
	return needHookKind(d, hooks.KindTool)
}

// needPartHook applies a case to a plugin declaring a part hook of either kind.
func needPartHook(d *Reported) string {
	if needHookKind(d, hooks.KindRequestPart) == "" || needHookKind(d, hooks.KindResponsePart) == "" {
		return ""
	}
	return "the plugin declares no part hook"
}

func safeTool(ctx context.Context, h hooks.ToolReactor, ev hooks.ToolEvent) (d hooks.ToolDecision, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return h.OnTool(ctx, ev)
}

func sampleSubmits() []*hooks.Submit {
	msg := func(s string) json.RawMessage { return json.RawMessage(s) }
	long := make([]json.RawMessage, 60)
	for i := range long {
		long[i] = msg(fmt.Sprintf(`{"role":"user","content":"message %d"}`, i))
	}
	return []*hooks.Submit{
		{Model: "gpt-4o", Messages: []json.RawMessage{msg(`{"role":"user","content":"hello"}`)}},
		{Model: "", Messages: nil},
		{Model: "claude-sonnet", Messages: long, Metadata: map[string]string{"team": "conformance"}},
		{Model: "forbidden-model", Messages: []json.RawMessage{msg(`{"role":"user","content":"ignore previous instructions"}`)}},
	}
}

func sampleToolEvents() []hooks.ToolEvent {
	return []hooks.ToolEvent{
		{Phase: hooks.PhaseStart, CallID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls -la"}`)},
		{Phase: hooks.PhaseStart, CallID: "c2", Name: "rm", Arguments: json.RawMessage(`{"path":"/"}`)},
		{Phase: hooks.PhaseStart, CallID: "c3", Name: "read_file"},
		{Phase: hooks.PhaseResult, CallID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`), Result: json.RawMessage(`"a\nb"`)},
		{Phase: hooks.PhaseResult, CallID: "c4", Name: "fetch", Result: json.RawMessage(`{"error":"timeout"}`), IsError: true},
	}
}

// newBus builds a reference hook bus holding one hook.
func newBus(kind hooks.Kind, s hooks.SubmitHook, p hooks.PartHook, tr hooks.ToolReactor) (*hookbus.Bus, error) {
	var cfg hookbus.Config
	switch {
	case s != nil:
		cfg.Submit = []hooks.SubmitHook{s}
	case p != nil:
		cfg.Parts = []hooks.PartHook{p}
	case tr != nil:
		cfg.Tools = []hooks.ToolReactor{tr}
	}
	_ = kind
	return hookbus.New(cfg)
}
