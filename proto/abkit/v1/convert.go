package abkitv1

import (
	"net/http"

	"github.com/abkit/abkit/sdk/gateway"
)

// This file converts between the wire messages and the public contract
// types of sdk/gateway, so that the Go SDK and the host agree on one
// mapping.

// HeaderToProto converts an HTTP header map. The order of names is not
// significant; values keep their order.
func HeaderToProto(h http.Header) []*Header {
	if len(h) == 0 {
		return nil
	}
	out := make([]*Header, 0, len(h))
	for k, v := range h {
		out = append(out, &Header{Name: k, Values: v})
	}
	return out
}

// HeaderFromProto converts headers back into a map, keeping names as sent.
func HeaderFromProto(hs []*Header) http.Header {
	h := make(http.Header, len(hs))
	for _, x := range hs {
		h[x.GetName()] = append(h[x.GetName()], x.GetValues()...)
	}
	return h
}

// CapabilitiesToProto converts capabilities reported by an instance named
// name.
func CapabilitiesToProto(name string, c gateway.Capabilities) *Capabilities {
	return &Capabilities{
		Name:               name,
		ReadsBody:          c.ReadsBody,
		WritesRequestBody:  c.WritesRequestBody,
		WritesResponseBody: c.WritesResponseBody,
		Requires:           c.Requires,
		RequiresAny:        c.RequiresAny,
		Description:        c.Description,
		Extensions:         extensionSpecsToProto(c.Extensions),
	}
}

func extensionSpecsToProto(in []gateway.ExtensionSpec) []*ExtensionSpec {
	var out []*ExtensionSpec
	for _, s := range in {
		out = append(out, &ExtensionSpec{Key: s.Key, Writes: s.Writes, Reads: s.Reads, Optional: s.Optional,
			SchemaJson: gateway.CompactJSON(s.Schema), Description: s.Description})
	}
	return out
}

// Gateway converts c back into sdk capabilities. Empty lists become nil, as
// an in-process plugin that declares none reports them.
func (c *Capabilities) Gateway() gateway.Capabilities {
	g := gateway.Capabilities{
		ReadsBody:          c.GetReadsBody(),
		WritesRequestBody:  c.GetWritesRequestBody(),
		WritesResponseBody: c.GetWritesResponseBody(),
		Description:        c.GetDescription(),
	}
	if len(c.GetRequires()) > 0 {
		g.Requires = append([]string(nil), c.GetRequires()...)
	}
	if len(c.GetRequiresAny()) > 0 {
		g.RequiresAny = append([]string(nil), c.GetRequiresAny()...)
	}
	for _, s := range c.GetExtensions() {
		spec := gateway.ExtensionSpec{Key: s.GetKey(), Writes: s.GetWrites(), Reads: s.GetReads(),
			Optional: s.GetOptional(), Description: s.GetDescription()}
		if len(s.GetSchemaJson()) > 0 {
			spec.Schema = append([]byte(nil), s.GetSchemaJson()...)
		}
		g.Extensions = append(g.Extensions, spec)
	}
	return g
}

// ActionToProto converts a hook's answer.
func ActionToProto(a gateway.Action) *Action {
	return &Action{Kind: a.Kind.String(), Status: int32(a.Status), Reason: a.Reason}
}

// Gateway converts a back into a hook's answer. Anything but "reject" is a
// continue.
func (a *Action) Gateway() gateway.Action {
	if a.GetKind() == gateway.ActReject.String() {
		return gateway.Reject(int(a.GetStatus()), a.GetReason())
	}
	return gateway.Continue()
}

// Behaviour names of the optional pipeline behaviours, as Describe and
// NewInstance report them.
const (
	BehaviourFinish   = gateway.BehaviourFinish
	BehaviourInit     = gateway.BehaviourInit
	BehaviourReady    = gateway.BehaviourReady
	BehaviourShutdown = gateway.BehaviourShutdown
	BehaviourStream   = gateway.BehaviourStream
)

// Behaviours returns the optional behaviours p implements, sorted.
func Behaviours(p gateway.Plugin) []string { return gateway.Behaviours(p) }
