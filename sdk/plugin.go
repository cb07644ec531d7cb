// Package sdk is what a Go plugin author imports to ship an abkit plugin:
// the [Plugin] bundle that names what one plugin serves in any of the three
// contract families, and the Serve helpers that put it behind
// hashicorp/go-plugin.
//
// The contract types themselves live in sdk/gateway (family P, the request
// pipeline), sdk/intercept (family D, the intercept dispatcher) and
// sdk/hooks (family H, the hook bus); abkit's runtimes use the same types.
package sdk

import (
	"errors"
	"fmt"

	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// Plugin bundles what one plugin serves, in-process or as its own binary.
// Set the families it implements; leave the others nil.
type Plugin struct {
	// Name is the plugin's name in catalogs. For a family P plugin it must
	// equal Pipeline.Name.
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
}

// Extension is a family D extension: its manifest and a constructor.
type Extension struct {
	Manifest intercept.Manifest
	New      func() (intercept.Extension, error)
}

// HookSet is the family H hooks one plugin serves.
type HookSet struct {
	Submit []hooks.SubmitHook
	Parts  []hooks.PartHook
	Tools  []hooks.ToolReactor
}

// Families returns the contract families p serves, in P, D, H order.
func (p Plugin) Families() []string {
	var f []string
	if p.Pipeline != nil {
		f = append(f, "P")
	}
	if p.Extension != nil {
		f = append(f, "D")
	}
	if p.Hooks != nil {
		f = append(f, "H")
	}
	return f
}

// Validate reports what makes p unservable, all problems at once.
func (p Plugin) Validate() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("plugin name is empty"))
	}
	if err := gateway.CheckDescription(p.Description); err != nil {
		errs = append(errs, fmt.Errorf("plugin %q: %w (P5)", p.Name, err))
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
