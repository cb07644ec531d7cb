package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pluginhost"
)

// Describer describes plugin binaries for the catalog's dir: sources
// through the go-plugin host: it starts each binary, completes the
// handshake, asks what it serves and stops it before returning.
//
// A plugin that needs configuration cannot be probed by its own process
// with an empty config, so it describes itself without capabilities; the
// describer then probes it the way the builtin source probes a compiled-in
// plugin (no config, the schema's defaults, a sample config), by making
// two instances in the plugin process, so a binary and its compiled-in
// twin have the same descriptor (P2 observations included).
type Describer struct {
	Options pluginhost.Options
}

var _ catalog.Describer = Describer{}

// Describe implements catalog.Describer.
func (d Describer) Describe(ctx context.Context, path string) ([]catalog.Descriptor, error) {
	p, err := pluginhost.Load(ctx, path, d.Options)
	if err != nil {
		if errors.Is(err, pluginhost.ErrNotPlugin) {
			return nil, fmt.Errorf("%w: %w", catalog.ErrNotPlugin, err)
		}
		return nil, err
	}
	defer p.Close()
	desc := p.Descriptor()
	if f, ok := p.Factory(); ok && desc.Capabilities == nil {
		// A plugin no config satisfies keeps unknown capabilities, as a
		// compiled-in one does; lint then reports what it cannot check.
		probed, _ := catalog.DescribeBuiltin(catalog.Builtin{Name: desc.Name, Pipeline: &f})
		desc.Capabilities, desc.Behaviours, desc.Observed = probed.Capabilities, probed.Behaviours, probed.Observed
		if desc.Description == "" {
			desc.Description = probed.Description
		}
	}
	return []catalog.Descriptor{desc}, nil
}

// NewDescriber returns the describer abctl uses. It turns off go-plugin's
// automatic mutual TLS: a description exchanges only the plugin's own
// metadata with a child process that lives for a few milliseconds, and the
// two certificates cost about 35 ms per binary, which would put a cold
// listing of 50 binaries over its 1 s budget. Plugins that carry traffic
// (dryrun --plugin-dir) keep mutual TLS.
func NewDescriber() Describer {
	return Describer{Options: pluginhost.Options{DisableAutoMTLS: true}}
}

// CatalogOptions are abctl's catalog options: the compiled-in plugins for
// the builtin source and the go-plugin describer for dir: sources.
func CatalogOptions() catalog.Options {
	return catalog.Options{Builtin: Builtins, Describer: NewDescriber()}
}
