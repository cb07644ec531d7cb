package catalog

import (
	"context"
	"fmt"

	"github.com/abkit/abkit/internal/probe"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// Builtin is a compiled-in plugin as the builtin source sees it: a bundle of
// up to one pipeline factory, one extension manifest and any hooks under one
// name.
type Builtin struct {
	Name        string
	Description string
	Version     string
	Pipeline    *gateway.Factory
	Extension   *intercept.Manifest
	Hooks       []hooks.Spec
}

type builtinSource struct {
	list func() []Builtin
}

func (s *builtinSource) Spec() string { return "builtin" }

func (s *builtinSource) Load(ctx context.Context) ([]Descriptor, []Note, error) {
	if s.list == nil {
		return nil, nil, readErr("builtin", "no built-in plugins are compiled into this binary")
	}
	var (
		out   []Descriptor
		notes []Note
	)
	for _, b := range s.list() {
		d, note := DescribeBuiltin(b)
		out = append(out, d)
		if note != "" {
			notes = append(notes, Note{Source: "builtin", Path: b.Name, Msg: note})
		}
	}
	return out, notes, nil
}

// DescribeBuiltin describes a compiled-in plugin. For a pipeline plugin it
// makes two instances and records what each reports, so that [Lint] can
// check P2. note is non-empty when no instance could be made; the
// descriptor then has no capabilities.
func DescribeBuiltin(b Builtin) (d Descriptor, note string) {
	d = Descriptor{
		Name:        b.Name,
		Description: b.Description,
		Version:     b.Version,
		Origin:      Origin{Kind: OriginBuiltin, Source: "builtin"},
	}
	if f := b.Pipeline; f != nil {
		if d.Name == "" {
			d.Name = f.Name
		}
		d.Families = append(d.Families, family.Pipeline)
		d.Config = f.Config
		insts, _, err := probe.Instances(f)
		if err != nil {
			note = fmt.Sprintf("could not make an instance (%v); capabilities unknown", err)
		} else {
			first := insts[0]
			for _, p := range insts {
				d.Observed = append(d.Observed, probe.Observe(p))
			}
			caps := first.Capabilities()
			d.Capabilities = FromGateway(caps)
			if d.Description == "" {
				d.Description = caps.Description
			}
			d.Behaviours = gateway.Behaviours(first)
		}
	}
	if m := b.Extension; m != nil {
		if d.Name == "" {
			d.Name = m.PluginID
		}
		d.Extension = FromManifest(*m)
	}
	if len(b.Hooks) > 0 {
		d.Hooks = append([]hooks.Spec(nil), b.Hooks...)
	}
	return d, note
}

// FromManifest returns the catalog form of an extension manifest.
func FromManifest(m intercept.Manifest) *Extension {
	e := &Extension{Priority: m.Priority, Required: m.Required, Slots: append([]string(nil), m.Slots...)}
	for _, p := range m.Points {
		e.Points = append(e.Points, string(p))
	}
	if m.Timeout != 0 {
		e.Timeout = m.Timeout.String()
	}
	return e
}

// FromSDK returns the builtin form of an sdk plugin bundle: its factory,
// its extension's manifest and the specs of its hooks.
func FromSDK(p sdk.Plugin) Builtin {
	b := Builtin{Name: p.Name, Description: p.Description, Version: p.Version, Pipeline: p.Pipeline}
	if p.Extension != nil {
		m := p.Extension.Manifest
		b.Extension = &m
	}
	b.Hooks = p.Hooks.Specs()
	return b
}
