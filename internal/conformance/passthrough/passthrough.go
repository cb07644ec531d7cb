// Package passthrough holds the pipeline plugin that passes every
// exchange on unchanged: the base that the conformance suite's broken
// plugins (internal/conformance/broken) and faulty plugins
// (internal/conformance/faults) embed, each overriding only the hooks its
// one broken rule lives in.
package passthrough

import (
	"context"

	"github.com/abkit/abkit/sdk/gateway"
)

// Plugin answers Name and Capabilities from its fields and continues
// every request and response.
type Plugin struct {
	ID   string
	Caps gateway.Capabilities
}

func (p Plugin) Name() string                       { return p.ID }
func (p Plugin) Capabilities() gateway.Capabilities { return p.Caps }
func (Plugin) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (Plugin) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
