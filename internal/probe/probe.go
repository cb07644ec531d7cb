// Package probe makes the instances a plugin's description is built from:
// the SDK's Describe across the protocol (internal/pluginserver), the
// builtin catalog source (internal/catalog) and the conformance suite's
// in-process subjects (internal/conformance) all describe a family P
// factory with [Instances], so a factory that panics, errs or returns
// nothing is reported the same way wherever it is described.
package probe

import (
	"encoding/json"
	"fmt"

	"github.com/abkit/abkit/sdk/gateway"
)

// New calls f.New(cfg). A factory with no New, a panic in it and a nil
// instance are errors naming the factory, so a describer never crashes on
// the plugin it describes.
func New(f *gateway.Factory, cfg json.RawMessage) (p gateway.Plugin, err error) {
	if f.New == nil {
		return nil, fmt.Errorf("factory %q has no New function", f.Name)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("factory %q panicked: %v", f.Name, r)
		}
	}()
	p, err = f.New(cfg)
	if err == nil && p == nil {
		err = fmt.Errorf("factory %q returned a nil plugin", f.Name)
	}
	return p, err
}

// Instances makes two instances of f, so that a host can check that
// capabilities are static (P2), with the first of
// gateway.ProbeConfigs(f.Config) that makes both: no config, the schema's
// defaults, a sample config, its examples, since a plugin may refuse to
// start without configuration. It returns the config used; the error is
// the first config's.
func Instances(f *gateway.Factory) ([]gateway.Plugin, json.RawMessage, error) {
	var firstErr error
	for _, cfg := range gateway.ProbeConfigs(f.Config) {
		insts, err := two(f, cfg)
		if err == nil {
			return insts, cfg, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		// ProbeConfigs always offers "no config"; this is a guard.
		firstErr = fmt.Errorf("factory %q: no config to try", f.Name)
	}
	return nil, nil, firstErr
}

func two(f *gateway.Factory, cfg json.RawMessage) ([]gateway.Plugin, error) {
	out := make([]gateway.Plugin, 0, 2)
	for range 2 {
		p, err := New(f, cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Observed is what one instance reported about itself: its Name and its
// Capabilities, which must be the same across instances (P2).
type Observed struct {
	Name         string               `json:"name"`
	Capabilities gateway.Capabilities `json:"capabilities"`
}

// Observe is what p reports about itself.
func Observe(p gateway.Plugin) Observed {
	return Observed{Name: p.Name(), Capabilities: p.Capabilities()}
}
