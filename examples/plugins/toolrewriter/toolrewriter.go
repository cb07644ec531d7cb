// Package toolrewriter is the tool-rewriter example hook (family H): a tool
// reactor that, by the first rule matching the tool (and phase), rewrites
// the call's arguments (setting or removing keys) or swallows the event so
// that no later reactor and no client sees it ([H5]). Other events pass.
//
// [H5]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package toolrewriter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/hooks"
)

// Name is the hook's ID and the plugin's name.
const Name = "tool-rewriter"

// Description is the one-line catalog description (P5).
const Description = "Rewrites tool-call arguments or swallows tool events by rule"

// Order is the reactor's place in the tool chain (H1).
const Order = 50

// Rule is one rewrite or swallow rule.
type Rule struct {
	// Tool is a tool name or a path.Match glob.
	Tool string `json:"tool"`
	// Phase limits the rule to start or result events; empty means both.
	Phase hooks.ToolPhase `json:"phase,omitempty"`
	// SetArguments sets these argument keys (JSON values).
	SetArguments map[string]json.RawMessage `json:"set_arguments,omitempty"`
	// RemoveArguments deletes these argument keys.
	RemoveArguments []string `json:"remove_arguments,omitempty"`
	// Swallow drops the event instead.
	Swallow bool   `json:"swallow,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Config is the reactor's configuration: rules in order, first match wins.
type Config struct {
	Rules []Rule `json:"rules"`
}

// DefaultConfig forces dry runs of deploy tools and hides debug tools.
func DefaultConfig() Config {
	return Config{Rules: []Rule{
		{Tool: "debug_*", Swallow: true, Reason: "debug tools are hidden"},
		{Tool: "deploy*", Phase: hooks.PhaseStart, SetArguments: map[string]json.RawMessage{"dry_run": json.RawMessage("true")}},
	}}
}

// Plugin bundles the reactor with DefaultConfig for the catalog.
func Plugin() sdk.Plugin {
	r, err := New(DefaultConfig())
	if err != nil {
		panic(err) // DefaultConfig is valid; a test holds it to that
	}
	return sdk.Plugin{Name: Name, Description: Description, Hooks: &sdk.HookSet{Tools: []hooks.ToolReactor{r}}}
}

// Reactor is a tool-rewriter instance; read-only after New, safe for
// concurrent events.
type Reactor struct {
	rules []Rule
}

var _ hooks.ToolReactor = (*Reactor)(nil)

// New checks the rules and makes the reactor.
func New(c Config) (*Reactor, error) {
	for i, r := range c.Rules {
		if r.Tool == "" {
			return nil, fmt.Errorf("%s config: rules[%d].tool is empty", Name, i)
		}
		if _, err := path.Match(r.Tool, ""); err != nil {
			return nil, fmt.Errorf("%s config: rules[%d].tool %q is not a valid glob: %w", Name, i, r.Tool, err)
		}
		switch r.Phase {
		case "", hooks.PhaseStart, hooks.PhaseResult:
		default:
			return nil, fmt.Errorf("%s config: rules[%d].phase %q: want start, result or empty", Name, i, r.Phase)
		}
		edits := len(r.SetArguments) > 0 || len(r.RemoveArguments) > 0
		if r.Swallow == edits {
			return nil, fmt.Errorf("%s config: rules[%d] must either swallow or edit arguments (set_arguments, remove_arguments), not both or neither", Name, i)
		}
		for k, v := range r.SetArguments {
			if !json.Valid(v) {
				return nil, fmt.Errorf("%s config: rules[%d].set_arguments[%q] is not valid JSON", Name, i, k)
			}
		}
	}
	rules := make([]Rule, len(c.Rules))
	for i, r := range c.Rules {
		r.SetArguments = maps.Clone(r.SetArguments)
		r.RemoveArguments = append([]string(nil), r.RemoveArguments...)
		rules[i] = r
	}
	return &Reactor{rules: rules}, nil
}

// Spec declares the reactor; its failures follow the bus's tool policy
// (H6).
func (*Reactor) Spec() hooks.Spec {
	return hooks.Spec{ID: Name, Order: Order, Kind: hooks.KindTool}
}

// OnTool applies the first matching rule.
func (r *Reactor) OnTool(_ context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
	for i, rule := range r.rules {
		if ok, _ := path.Match(rule.Tool, ev.Name); !ok || (rule.Phase != "" && rule.Phase != ev.Phase) {
			continue
		}
		if rule.Swallow {
			reason := rule.Reason
			if reason == "" {
				reason = fmt.Sprintf("%s rule %d swallows %q", Name, i, ev.Name)
			}
			return hooks.Swallow(reason), nil
		}
		args, changed, err := edit(ev.Arguments, rule)
		if err != nil {
			return hooks.ToolDecision{}, fmt.Errorf("%s: tool %q: %w", Name, ev.Name, err)
		}
		if !changed {
			return hooks.Pass(), nil
		}
		d := hooks.Rewrite(map[string]json.RawMessage{hooks.FieldArguments: args})
		d.Reason = rule.Reason
		return d, nil
	}
	return hooks.Pass(), nil
}

// edit applies a rule's argument edits to an arguments object.
func edit(raw json.RawMessage, rule Rule) (json.RawMessage, bool, error) {
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, false, fmt.Errorf("arguments are not a JSON object: %w", err)
		}
	}
	changed := false
	for _, k := range rule.RemoveArguments {
		if _, ok := args[k]; ok {
			delete(args, k)
			changed = true
		}
	}
	for k, v := range rule.SetArguments {
		if old, ok := args[k]; !ok || !jsonEqual(old, v) {
			args[k] = v
			changed = true
		}
	}
	if !changed {
		return raw, false, nil
	}
	out, err := json.Marshal(args)
	return out, true, err
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}
