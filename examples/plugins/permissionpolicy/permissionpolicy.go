// Package permissionpolicy is the permission-policy example extension
// (family D). At permission.decision it answers allow or deny by the first
// rule that matches the tool, or continue when none does, which leaves the
// host's own verdict standing ([D9], D10).
//
// [D9]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package permissionpolicy

import (
	"context"
	"encoding/json"
	"fmt"
	"path"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/intercept"
)

// Name is the extension's plugin ID.
const Name = "permission-policy"

// Description is the one-line catalog description (P5).
const Description = "Allows or denies tool permissions by tool-name rules"

// Rule decides for the tools it matches.
type Rule struct {
	// Tool is a tool name or a path.Match glob ("delete_*", "*").
	Tool string `json:"tool"`
	// ReadOnly, when set, also requires the call's readOnly flag to equal
	// it.
	ReadOnly *bool `json:"read_only,omitempty"`
	// Decision is allow or deny.
	Decision intercept.Decision `json:"decision"`
	// Reason is shown with the decision; a default names the rule.
	Reason string `json:"reason,omitempty"`
}

// Config is the extension's configuration: rules in order, first match
// wins.
type Config struct {
	Rules []Rule `json:"rules"`
}

// DefaultConfig allows read-only tools and denies delete_* tools.
func DefaultConfig() Config {
	yes := true
	return Config{Rules: []Rule{
		{Tool: "delete_*", Decision: intercept.DecisionDeny, Reason: "destructive tools are denied by policy"},
		{Tool: "*", ReadOnly: &yes, Decision: intercept.DecisionAllow, Reason: "read-only tools are allowed by policy"},
	}}
}

// Manifest joins the chain at permission.decision. The extension is
// optional-class: if it fails, the host's verdict stands (D13).
func Manifest() intercept.Manifest {
	return intercept.Manifest{PluginID: Name, Points: []intercept.Point{intercept.PermissionDecision}}
}

// Plugin bundles the extension with DefaultConfig for the catalog.
func Plugin() sdk.Plugin {
	return sdk.ExtensionPlugin(Name, Description, Manifest(), func() (*Extension, error) { return New(DefaultConfig()) })
}

// Extension answers at permission.decision by its rules; it is read-only
// after New and safe for concurrent calls.
type Extension struct {
	rules []Rule
}

var _ intercept.Extension = (*Extension)(nil)

// New checks the rules and makes the extension.
func New(c Config) (*Extension, error) {
	for i, r := range c.Rules {
		if r.Tool == "" {
			return nil, fmt.Errorf("%s config: rules[%d].tool is empty; name a tool or a glob such as \"*\"", Name, i)
		}
		if _, err := path.Match(r.Tool, ""); err != nil {
			return nil, fmt.Errorf("%s config: rules[%d].tool %q is not a valid glob: %w", Name, i, r.Tool, err)
		}
		if r.Decision != intercept.DecisionAllow && r.Decision != intercept.DecisionDeny {
			return nil, fmt.Errorf("%s config: rules[%d].decision %q: want allow or deny", Name, i, r.Decision)
		}
	}
	return &Extension{rules: append([]Rule(nil), c.Rules...)}, nil
}

// Call answers at permission.decision and continues everywhere else.
func (e *Extension) Call(_ context.Context, point intercept.Point, payload json.RawMessage) (intercept.Answer, error) {
	if point != intercept.PermissionDecision {
		return intercept.Continue(), nil
	}
	var p intercept.PermissionPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return intercept.Answer{}, fmt.Errorf("%s: decode permission payload: %w", Name, err)
	}
	for i, r := range e.rules {
		if ok, _ := path.Match(r.Tool, p.Name); !ok {
			continue
		}
		if r.ReadOnly != nil && *r.ReadOnly != p.ReadOnly {
			continue
		}
		reason := r.Reason
		if reason == "" {
			reason = fmt.Sprintf("%s rule %d (%s) for tool %q", Name, i, r.Tool, p.Name)
		}
		return intercept.Answer{Decision: r.Decision, Reason: reason}, nil
	}
	return intercept.Continue(), nil
}

// Notify ignores events.
func (*Extension) Notify(intercept.Point, json.RawMessage) error { return nil }
