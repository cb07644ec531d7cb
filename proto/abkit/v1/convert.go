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
	out := &Action{Kind: a.Kind.String(), Status: int32(a.Status), Reason: a.Reason}
	if r := a.Rejection; r != nil && a.Kind == gateway.ActReject {
		out.Rejection = &Rejection{Header: HeaderToProto(r.Header), HasBody: r.Body != nil, Body: r.Body, ContentType: r.ContentType}
	}
	return out
}

// Gateway converts a back into a hook's answer. Anything but "reject" is a
// continue.
func (a *Action) Gateway() gateway.Action {
	if a.GetKind() != gateway.ActReject.String() {
		return gateway.Continue()
	}
	r := a.GetRejection()
	if r == nil {
		return gateway.Reject(int(a.GetStatus()), a.GetReason())
	}
	g := gateway.Rejection{ContentType: r.GetContentType()}
	if len(r.GetHeader()) > 0 {
		g.Header = HeaderFromProto(r.GetHeader())
	}
	if r.GetHasBody() {
		g.Body = r.GetBody()
		if g.Body == nil {
			g.Body = []byte{}
		}
	}
	return gateway.RejectWith(int(a.GetStatus()), a.GetReason(), g)
}

// HeaderDeltaOf returns what changed from before to after: names set or
// replaced with their values after, names deleted. Nil when nothing
// changed, which costs one lookup per name and no allocation.
func HeaderDeltaOf(before, after http.Header) *HeaderDelta {
	var d *HeaderDelta
	kept := 0 // names of after that before has
	for n, v := range after {
		old, ok := before[n]
		if ok {
			kept++
			if equalValues(old, v) {
				continue
			}
		}
		if d == nil {
			d = &HeaderDelta{}
		}
		d.Set = append(d.Set, &Header{Name: n, Values: append([]string(nil), v...)})
	}
	if kept == len(before) {
		return d // every name of before is still there
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			if d == nil {
				d = &HeaderDelta{}
			}
			d.Deleted = append(d.Deleted, n)
		}
	}
	return d
}

// HeaderDeltaFrom is HeaderDeltaOf with before as the wire list it was
// decoded from (HeaderFromProto copies the values, so the list is intact):
// the common case, nothing changed, costs no map of its own.
func HeaderDeltaFrom(before []*Header, after http.Header) *HeaderDelta {
	if len(before) == len(after) {
		same := true
		for _, x := range before {
			if v, ok := after[x.GetName()]; !ok || !equalValues(v, x.GetValues()) {
				same = false
				break
			}
		}
		if same {
			return nil
		}
	}
	return HeaderDeltaOf(HeaderFromProto(before), after)
}

func equalValues(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Apply makes the changes of d in h: h must not be nil unless d is empty.
func (d *HeaderDelta) Apply(h http.Header) {
	for _, x := range d.GetSet() {
		h[x.GetName()] = append([]string(nil), x.GetValues()...)
	}
	for _, n := range d.GetDeleted() {
		delete(h, n)
	}
}

// Empty reports whether d changes nothing.
func (d *HeaderDelta) Empty() bool { return len(d.GetSet()) == 0 && len(d.GetDeleted()) == 0 }
