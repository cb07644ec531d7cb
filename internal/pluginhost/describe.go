package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/probe"
)

// Describer describes plugin binaries for the catalog's dir: source: it
// starts each binary, completes the handshake, asks Describe and stops it.
type Describer struct {
	Options Options
}

var _ catalog.Describer = Describer{}

// Describe implements catalog.Describer. ctx bounds the whole description,
// the start included: without a StartTimeout of its own the start may take
// until ctx's deadline (abctl's --describe-timeout), not only the default
// start timeout. The process is killed and reaped before Describe returns.
// A binary that does not complete the handshake gives an error wrapping
// catalog.ErrNotPlugin.
func (d Describer) Describe(ctx context.Context, path string) ([]catalog.Descriptor, error) {
	o := d.Options
	if dl, ok := ctx.Deadline(); ok && o.StartTimeout == 0 {
		o.StartTimeout = max(time.Until(dl), time.Millisecond)
	}
	p, err := Load(ctx, path, o)
	if err != nil {
		if errors.Is(err, ErrNotPlugin) {
			return nil, fmt.Errorf("%w: %w", catalog.ErrNotPlugin, err)
		}
		return nil, err
	}
	defer p.Close()
	return []catalog.Descriptor{p.Descriptor()}, nil
}

var _ catalog.CommandDescriber = Describer{}

// DescribeCommand implements catalog.CommandDescriber: Describe for a
// manifest's command line, run in cmd.Dir.
func (d Describer) DescribeCommand(ctx context.Context, cmd catalog.Command) ([]catalog.Descriptor, error) {
	if len(cmd.Argv) == 0 {
		return nil, errors.New("pluginhost: empty command line")
	}
	o := d.Options
	o.Args = append(slices.Clone(cmd.Argv[1:]), o.Args...)
	o.Dir = cmd.Dir
	return Describer{Options: o}.Describe(ctx, cmd.Argv[0])
}

// Descriptor is the catalog descriptor of the loaded plugin. Origin.Kind is
// binary with the path; the caller sets Source and SHA256.
func (p *Plugin) Descriptor() catalog.Descriptor {
	d := p.desc
	out := catalog.Descriptor{
		Name:        d.GetName(),
		Description: d.GetDescription(),
		Version:     d.GetVersion(),
		Families:    slices.Clone(d.GetFamilies()),
		Origin:      catalog.Origin{Kind: catalog.OriginBinary, Path: p.path},
	}
	if f, ok := p.Factory(); ok {
		out.Config = f.Config
		info := d.GetPipeline()
		if info.GetCapabilities() != nil {
			caps := info.GetCapabilities().Gateway()
			out.Capabilities = catalog.FromGateway(caps)
			out.Behaviours = slices.Clone(info.GetBehaviours())
			if out.Description == "" {
				out.Description = caps.Description
			}
		}
		for _, o := range info.GetObserved() {
			out.Observed = append(out.Observed, probe.Observed{Name: o.GetName(), Capabilities: o.Gateway()})
		}
	}
	if m, ok := p.Manifest(); ok {
		out.Extension = catalog.FromManifest(m)
	}
	for _, h := range d.GetHooks() {
		sp := specOf(h)
		out.Hooks = append(out.Hooks, sp)
	}
	return out
}
