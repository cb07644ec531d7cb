// Package sdk is what a Go plugin author imports to ship an abkit plugin:
// the [Plugin] bundle that names what one plugin serves in any of the three
// contract families, and the Serve helpers that put it behind
// hashicorp/go-plugin.
//
// The contract types themselves live in sdk/gateway (family P, the request
// pipeline), sdk/intercept (family D, the intercept dispatcher) and
// sdk/hooks (family H, the hook bus); abkit's runtimes use the same types.
//
// # A complete plugin binary
//
// The same bundle runs in-process (a host registers Pipeline directly) and
// as its own binary, whose main calls [Serve] and nothing else:
//
//	package main
//
//	import (
//		"context"
//		"encoding/json"
//
//		"github.com/abkit/abkit/sdk"
//		"github.com/abkit/abkit/sdk/gateway"
//	)
//
//	type versionGate struct{}
//
//	func (versionGate) Name() string { return "version-gate" }
//	func (versionGate) Capabilities() gateway.Capabilities {
//		return gateway.Capabilities{Description: "Rejects requests without an X-Api-Version header"}
//	}
//	func (versionGate) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
//		if ex.Request.Header.Get("X-Api-Version") == "" {
//			return gateway.Reject(400, "missing X-Api-Version")
//		}
//		return gateway.Continue()
//	}
//	func (versionGate) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
//		return gateway.Continue()
//	}
//
//	func main() {
//		sdk.Serve(sdk.Plugin{
//			Name:        "version-gate",
//			Description: "Rejects requests without an X-Api-Version header",
//			Version:     "1.0.0",
//			Pipeline: &gateway.Factory{
//				Name: "version-gate",
//				New:  func(json.RawMessage) (gateway.Plugin, error) { return versionGate{}, nil },
//			},
//		})
//	}
//
// # A plugin's identity, given once
//
// The bundle is the authoritative place for a plugin's name and
// description. [PipelinePlugin] builds a family P bundle from them and a
// factory whose Name, and whose instances' Name() and
// Capabilities().Description, may be left empty: they are filled in from
// the bundle, and an instance reporting another name is refused. The main
// above can then read
//
//	sdk.Serve(sdk.PipelinePlugin("version-gate", "Rejects requests without an X-Api-Version header",
//		gateway.Factory{New: func(json.RawMessage) (gateway.Plugin, error) { return versionGate{}, nil }}))
//
// with versionGate's Name returning "" and its Capabilities no
// Description. Bundles written out in full, as above, work as before;
// [Plugin.Validate] reports a bundle whose names disagree.
//
// Build it with go build and point a host at the binary (for example a
// catalog dir: source). Run directly, the binary prints go-plugin's "not
// meant to be executed directly" notice and exits with status 1: only a
// host that knows the handshake ([Handshake]) can start it.
//
// Across the boundary a plugin behaves as in-process: the host assigns each
// exchange an ID and the SDK keeps the plugin-side exchange (its typed state,
// [P31]) until the exchange's last call for the plugin; body writes are sent
// back and applied, or refused (P17), by the host; extension values cross
// as JSON, so read them back with sdk/extension (extension.Get) rather than
// a type assertion.
//
// # What else an author builds on
//
// sdk/sse frames what a streaming plugin is given (events with their fields
// and raw bytes, or a whole non-SSE body); sdk/config decodes a config
// block strictly against the plugin's schema; sdk/plugintest drives a
// plugin's hooks in its unit tests and sdk/conformancetest runs the whole
// conformance suite in go test; sdk/jsonrpc reads JSON-RPC (MCP, A2A);
// sdk/redact removes credentials from what a plugin logs. The example
// plugins (examples/plugins) use nothing else of this module.
//
// [P31]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package sdk

import (
	"errors"
	"fmt"

	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// Plugin bundles what one plugin serves, in-process or as its own binary.
// Set the families it implements; leave the others nil.
type Plugin struct {
	// Name is the plugin's name in catalogs. For a family P plugin it must
	// equal Pipeline.Name ([PipelinePlugin] makes it so).
	Name string
	// Description is one line of at most 80 characters (P5).
	Description string
	// Version is free-form, for operators.
	Version string

	// Pipeline is the family P factory.
	Pipeline *gateway.Factory
	// Extension is the family D extension.
	Extension *Extension
	// Hooks are the family H hooks.
	Hooks *HookSet

	// Alternatives declare the behaviours the plugin takes where the
	// contracts allow several: choice point ID to alternative name, as
	// `conformance list --rules` lists them. The conformance suite checks
	// a declared alternative as a rule and reports the others apart.
	Alternatives map[string]string
}

// Extension is a family D extension: its manifest and a constructor.
type Extension struct {
	Manifest intercept.Manifest
	New      func() (intercept.Extension, error)
}

// ExtensionPlugin returns the bundle of a family D extension: its name,
// description, manifest and a constructor of the instance the bundle
// serves, of the extension's own type. When the constructor fails, New
// returns its error and a nil Extension (not a nil pointer in one).
func ExtensionPlugin[E intercept.Extension](name, description string, m intercept.Manifest, newExt func() (E, error)) Plugin {
	return Plugin{Name: name, Description: description, Extension: &Extension{
		Manifest: m,
		New: func() (intercept.Extension, error) {
			e, err := newExt()
			if err != nil {
				return nil, err
			}
			return e, nil
		},
	}}
}

// HookSet is the family H hooks one plugin serves.
type HookSet struct {
	Submit []hooks.SubmitHook
	Parts  []hooks.PartHook
	Tools  []hooks.ToolReactor
}

// Specs returns the specs of every hook in h, submit hooks first, then part
// hooks, then tool reactors: the order a plugin's Describe lists them in.
func (h *HookSet) Specs() []hooks.Spec {
	if h == nil {
		return nil
	}
	var out []hooks.Spec
	for _, x := range h.Submit {
		out = append(out, x.Spec())
	}
	for _, x := range h.Parts {
		out = append(out, x.Spec())
	}
	for _, x := range h.Tools {
		out = append(out, x.Spec())
	}
	return out
}

// Families returns the contract families p serves, in P, D, H order.
func (p Plugin) Families() []string {
	return family.Of(p.Pipeline != nil, p.Extension != nil, p.Hooks != nil)
}

// Validate reports every problem with p, all at once: what makes it
// unservable ([Plugin.Servable]) and a description that breaks P5
// ([Plugin.CheckDescription]). Plugin authors call it in their tests.
func (p Plugin) Validate() error {
	return errors.Join(p.Servable(), p.CheckDescription())
}

// CheckDescription reports why p's Description breaks P5 (empty, more than
// one line, or over 80 runes), or nil. A bad description does not stop
// [Serve]: hosts judge it (catalog lint and the conformance case
// P5/description/plugin flag it), so the plugin author sees the verdict.
func (p Plugin) CheckDescription() error {
	if err := gateway.CheckDescription(p.Description); err != nil {
		return fmt.Errorf("plugin %q: %w (P5)", p.Name, err)
	}
	return nil
}

// Servable reports, all at once, what makes p impossible to serve: no
// name, no family, nil constructors, or a Pipeline.Name that differs from
// Name. It does not check the description (see [Plugin.CheckDescription]).
func (p Plugin) Servable() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("plugin name is empty"))
	}
	if p.Pipeline == nil && p.Extension == nil && p.Hooks == nil {
		errs = append(errs, fmt.Errorf("plugin %q serves no family: set Pipeline, Extension or Hooks", p.Name))
	}
	if p.Pipeline != nil {
		if p.Pipeline.Name != p.Name {
			errs = append(errs, fmt.Errorf("plugin %q: Pipeline.Name is %q; make them equal", p.Name, p.Pipeline.Name))
		}
		if p.Pipeline.New == nil {
			errs = append(errs, fmt.Errorf("plugin %q: Pipeline.New is nil", p.Name))
		}
	}
	if p.Extension != nil && p.Extension.New == nil {
		errs = append(errs, fmt.Errorf("plugin %q: Extension.New is nil", p.Name))
	}
	return errors.Join(errs...)
}
