package pipeline

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// Why a header change was refused, as traces and warnings say it.
const (
	refusedFraming   = "framing header: the host's (P32, P33)"
	refusedHeadSent  = "the response head was already sent (P33)"
	framingHeaderCnt = 9 // len(gateway.FramingHeaderNames())
)

// framing is the host's values of the framing headers (gateway.IsFramingHeader)
// of one header map, kept so that a plugin's change to them can be undone:
// they describe the message as the host sends it, not as a plugin would
// like it.
type framing [framingHeaderCnt][]string

func (f *framing) take(h http.Header) {
	for i, n := range gateway.FramingHeaderNames() {
		f[i] = h[n]
	}
}

// restore puts the host's framing values back into h and returns the names
// a plugin had changed, or nil.
func (f *framing) restore(h http.Header) []string {
	var changed []string
	for i, n := range gateway.FramingHeaderNames() {
		cur, ok := h[n]
		if slices.Equal(cur, f[i]) && ok == (f[i] != nil) {
			continue
		}
		changed = append(changed, n)
		if f[i] == nil {
			delete(h, n)
		} else {
			h[n] = f[i]
		}
	}
	// A plugin that writes the map directly can add a framing header under
	// a name that is not canonical (h["content-length"]); the wire would
	// send it all the same, so it is dropped too.
	for k := range h {
		if c := http.CanonicalHeaderKey(k); c != k && gateway.IsFramingHeader(c) {
			delete(h, k)
			if !slices.Contains(changed, c) {
				changed = append(changed, c)
			}
		}
	}
	return changed
}

// headerChanges lists what changed from before to after, in name order,
// values redacted (a credential header's value never reaches a trace).
// refuse, when not nil, gives the reason a change was not applied.
func headerChanges(before, after http.Header, response bool, refuse func(name string) string) []trace.HeaderChange {
	var out []trace.HeaderChange
	for n, v := range after {
		if old, ok := before[n]; ok && slices.Equal(old, v) {
			continue
		}
		out = append(out, trace.HeaderChange{Response: response, Name: n, Values: slices.Clone(v)})
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			out = append(out, trace.HeaderChange{Response: response, Name: n, Deleted: true})
		}
	}
	if out == nil {
		return nil
	}
	slices.SortFunc(out, func(a, b trace.HeaderChange) int { return strings.Compare(a.Name, b.Name) })
	set := http.Header{}
	for _, c := range out {
		if !c.Deleted {
			set[c.Name] = c.Values
		}
	}
	red := redact.Header(set)
	for i := range out {
		c := &out[i]
		if !c.Deleted {
			c.Values = red[c.Name]
		}
		if refuse != nil {
			c.Refused = refuse(c.Name)
		}
	}
	return out
}

func refuseFraming(name string) string {
	if gateway.IsFramingHeader(name) {
		return refusedFraming
	}
	return ""
}

func refuseAll(string) string { return refusedHeadSent }

// sameHeader reports whether a and b hold the same names and values.
func sameHeader(a, b http.Header) bool {
	return maps.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}

// ChangedHeaderNames lists the names whose values differ between a and b,
// sorted; a name only one of them holds is listed. The conformance suite's
// P32 check compares headers with it too.
func ChangedHeaderNames(a, b http.Header) []string {
	var out []string
	for n, v := range a {
		if w, ok := b[n]; !ok || !slices.Equal(v, w) {
			out = append(out, n)
		}
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// rejectionResponse is the header and body of a denial that carries a
// plugin's rejection (P34): the plugin's headers merged in, framing headers
// left out (they are returned to be reported), and its body with its
// content type in place of the plain reason.
func rejectionResponse(r *gateway.Rejection, reason string) (h http.Header, body []byte, dropped []string) {
	h = http.Header{}
	for n, v := range r.Header {
		cn := http.CanonicalHeaderKey(n)
		if gateway.IsFramingHeader(cn) {
			dropped = append(dropped, cn)
			continue
		}
		h[cn] = append(h[cn], v...)
	}
	slices.Sort(dropped)
	body = r.Body
	switch {
	case r.ContentType != "":
		h.Set("Content-Type", r.ContentType)
	case h.Get("Content-Type") != "":
	default:
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	if body == nil {
		body = []byte(reason + "\n")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return h, body, dropped
}

// traceRejection is a rejection as a trace shows it: redacted headers and
// body. Nil when the rejection carries nothing but its status and reason.
func traceRejection(r *gateway.Rejection) *trace.Rejection {
	if r == nil || (len(r.Header) == 0 && r.Body == nil && r.ContentType == "") {
		return nil
	}
	t := &trace.Rejection{ContentType: r.ContentType}
	if len(r.Header) > 0 {
		t.Header = redact.Header(r.Header)
	}
	if r.Body != nil {
		t.Body = string(redact.Bytes(r.Body))
	}
	return t
}

// RequestTo returns a request of method to target (an absolute URL or a
// path) with the target's parts filled from it and, when it has no host,
// from h's Host header (P35): how a host that has a URL and headers, not
// a transport (a fixture, a scenario), fills them. There is no remote
// address.
func RequestTo(method, target string, h http.Header, body []byte) Request {
	g := gateway.Request{URL: target}
	g.FillTarget(h.Get("Host"))
	return Request{Request: gateway.Request{Method: method, URL: target, Scheme: g.Scheme, Host: g.Host, Path: g.Path, RawQuery: g.RawQuery, Header: h}, Body: body}
}
