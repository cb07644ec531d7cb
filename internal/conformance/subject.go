package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/abkit/abkit/internal/probe"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// Reported is what the plugin under test says about itself (the
// protocol's Describe answer), as it said it: nothing is normalised, so
// cases can check it. The catalog's entry for a plugin, normalised for
// operators, is catalog.Descriptor; both record instances as
// probe.Observed.
type Reported struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Version     string   `json:"version,omitempty"`
	Families    []string `json:"families"`
	// Pipeline is set when the plugin serves family P.
	Pipeline *PipelineInfo `json:"pipeline,omitempty"`
	// Extension is set when the plugin serves family D.
	Extension *intercept.Manifest `json:"extension,omitempty"`
	// Hooks are the family H hooks, in the plugin's order.
	Hooks []hooks.Spec `json:"hooks,omitempty"`
	// Alternatives are the behaviours the implementation declares it
	// takes where the contract allows several: choice point ID
	// (ChoicePoints) to alternative name.
	Alternatives map[string]string `json:"alternatives,omitempty"`
}

// PipelineInfo describes a family P plugin.
type PipelineInfo struct {
	// Capabilities of a probe instance, as reported (P3).
	Capabilities gateway.Capabilities `json:"capabilities"`
	// InstanceName is the Name() the probe instance reported (P1, P2).
	InstanceName string `json:"instance_name"`
	// Behaviours implemented, sorted.
	Behaviours []string `json:"behaviours,omitempty"`
	// Config is the configuration schema; nil when the plugin takes none.
	Config *gateway.ConfigSchema `json:"config,omitempty"`
	// Observed holds what each probe instance reported (P2).
	Observed []probe.Observed `json:"observed,omitempty"`
	// ProbeError is set when no probe instance could be made.
	ProbeError string `json:"probe_error,omitempty"`
}

// Has reports whether the descriptor serves family f.
func (d *Reported) Has(f string) bool { return slices.Contains(d.Families, f) }

// HasBehaviour reports whether a family P plugin implements behaviour b.
func (d *Reported) HasBehaviour(b string) bool {
	return d.Pipeline != nil && slices.Contains(d.Pipeline.Behaviours, b)
}

// Subject is one running copy of the plugin under test: in-process, or a
// plugin process behind the protocol. Its Plugin is what the reference
// runtimes drive; every call may fail if the process died.
type Subject interface {
	// Describe returns the plugin's descriptor, read once at launch.
	Describe() *Reported
	// Plugin returns the families the subject serves as runtime-facing
	// values (factory, extension constructor, hooks).
	Plugin() sdk.Plugin
	// Stderr returns what the plugin wrote to its stderr so far.
	Stderr() string
	// Exited reports why the plugin process is gone, or nil while it runs.
	Exited() error
	// Close stops the subject and releases its process. It is safe to call
	// more than once and from any goroutine.
	Close() error
}

// Launcher starts fresh subjects of one plugin.
type Launcher interface {
	// Launch starts a subject. An error means the plugin could not be
	// started or described (exit code 3).
	Launch(ctx context.Context) (Subject, error)
	// Target names what is launched, for reports.
	Target() string
}

// InProcess returns a launcher that serves p directly, without a process:
// the plugin author's own tests and the runner's tests use it. A hang in
// p cannot be killed in-process; the runner abandons the case's goroutine.
func InProcess(p sdk.Plugin) Launcher { return inProcess{p} }

type inProcess struct{ p sdk.Plugin }

func (l inProcess) Target() string { return "in-process:" + l.p.Name }

func (l inProcess) Launch(ctx context.Context) (Subject, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := DescribeSDK(l.p)
	return &inProcSubject{p: l.p, d: d}, nil
}

type inProcSubject struct {
	p sdk.Plugin
	d *Reported
}

func (s *inProcSubject) Describe() *Reported { return s.d }
func (s *inProcSubject) Plugin() sdk.Plugin  { return s.p }
func (s *inProcSubject) Stderr() string      { return "" }
func (s *inProcSubject) Exited() error       { return nil }
func (s *inProcSubject) Close() error        { return nil }

// DescribeSDK describes an in-process plugin the way the SDK's Describe
// does across the protocol: a family P plugin gets two probe instances
// (P2), made with the first config the factory accepts (see WorkingConfig).
func DescribeSDK(p sdk.Plugin) *Reported {
	d := &Reported{Name: p.Name, Description: p.Description, Version: p.Version, Families: p.Families(), Alternatives: p.Alternatives}
	if f := p.Pipeline; f != nil {
		pi := &PipelineInfo{Config: f.Config}
		insts, _, err := probe.Instances(f)
		if err != nil {
			pi.ProbeError = err.Error()
		} else {
			pi.Capabilities = insts[0].Capabilities()
			pi.InstanceName = insts[0].Name()
			pi.Behaviours = gateway.Behaviours(insts[0])
			for _, in := range insts {
				pi.Observed = append(pi.Observed, probe.Observe(in))
			}
		}
		d.Pipeline = pi
	}
	if e := p.Extension; e != nil {
		m := e.Manifest
		d.Extension = &m
	}
	d.Hooks = p.Hooks.Specs()
	return d
}

// WorkingConfig returns the first of gateway.ProbeConfigs(f.Config) (no
// config, the schema's defaults, a sample config) with which f makes an
// instance: a plugin that needs configuration is tested with it.
func WorkingConfig(f *gateway.Factory) (json.RawMessage, error) {
	var errs []error
	for _, cfg := range gateway.ProbeConfigs(f.Config) {
		if _, err := probe.New(f, cfg); err != nil {
			errs = append(errs, err)
			continue
		}
		return cfg, nil
	}
	return nil, fmt.Errorf("no instance could be made with no config, the schema defaults or a sample config: %w", errors.Join(errs...))
}
