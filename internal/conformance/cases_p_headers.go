package conformance

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// addPipelineHeaderCases checks what a host sees of a plugin's header changes,
// rejections and identity (P32-P34, P36) across the standard exchanges:
// for a plugin binary every change seen here came back over the protocol.
func addPipelineHeaderCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "P32/headers/request-changes", Rules: []string{"P32"},
			Summary: "request header changes reach the upstream, and none touches a framing header",
			Explain: `Drives the standard exchanges and compares, for each allowed one, the
request header that goes upstream with the one the exchange started with.
Every header that differs must be one a plugin's OnRequest changed, as the
trace records it: for a plugin in another process the change came back over
the protocol as a header delta, and what the plugin changes in its own
behaviour examples is compared with their golden file (examples/NAME). A change
to a framing header (Content-Length, Transfer-Encoding, Connection and the
other hop-by-hop headers) fails: those are the host's, the change is
ignored, so the plugin does not do what it means to.
Fix: change headers in OnRequest through ex.Request.Header (Set, Del);
leave framing headers alone.`,
			Applies: pipelineReady,
			Run:     p32HeadersRequestChanges,
		},
		{
			ID: "P33/headers/after-head", Rules: []string{"P33"},
			Summary: "no response header change is made after a streamed response's head was sent",
			Explain: `Drives the streamed exchanges. A streaming plugin may change the response
headers during the first frame's call, before the head goes to the client;
a change in a later frame call is refused by the host (the head is gone)
and reported. The case fails on such a change: the client never sees it.
Fix: decide response headers in the first frame call (or in OnResponse
for a buffered response).`,
			Applies: pipelineReady,
			Run:     p33HeadersAfterHead,
		},
		{
			ID: "P34/rejection/headers", Rules: []string{"P34"},
			Summary: "a rejection's headers leave the framing headers to the host",
			Explain: `Drives the standard exchanges. A rejection may carry response headers and a
body (gateway.RejectWith, Challenge, RateLimited); the client gets them
with the status. Framing headers in a rejection (Content-Length,
Transfer-Encoding, ...) are dropped by the host, which frames the body
itself; the case fails when a rejection carries one.
Fix: give the body and its content type, not its length.`,
			Applies: pipelineReady,
			Run:     p34RejectionHeaders,
		},
		{
			ID: "P36/identity/shape", Rules: []string{"P36"},
			Summary: "an identity a plugin establishes has a subject, and claims that are a JSON object",
			Explain: `Drives the standard exchanges. A plugin that verifies a credential may set
the exchange's identity (ex.SetIdentity) for later plugins and OnFinish;
it crosses the process boundary as JSON ({"subject", "client_id",
"scopes", "claims"}). An identity without a subject, or with claims that
are not a JSON object, fails: later plugins authorise on them.
Fix: set Subject; give Claims as a JSON object or leave them nil.`,
			Applies: pipelineReady,
			Run:     p36IdentityShape,
		},
	} {
		r.Add(c)
	}
}

func p32HeadersRequestChanges(t *T) {
	rg := newRig(t, pipeline.Options{})
	for _, sc := range numbered(exchangeAxis()) {
		o := rg.run(sc, nil, false)
		changed := map[string]bool{}
		for _, e := range o.events {
			if e.Hook != trace.HookOnRequest {
				continue
			}
			for _, hc := range e.Headers {
				if hc.Refused != "" {
					if e.Plugin == rg.name {
						t.ErrorAt("P32", o.at, "OnRequest changed the framing header %s: %s; the change is ignored", hc.Name, hc.Refused)
					}
					continue
				}
				changed[hc.Name] = true
			}
		}
		if o.upstream == nil {
			continue
		}
		for _, n := range pipeline.ChangedHeaderNames(o.sent, o.upstream) {
			// An empty value list and none are the same here.
			differs := !slices.Equal(o.sent[n], o.upstream[n])
			// A header changed and changed back by two plugins is
			// in the trace but not in the difference: only an
			// unexplained difference fails.
			if differs && !changed[n] && !gateway.IsFramingHeader(n) {
				t.ErrorAt("P32", o.at, "request header %s changed on the way upstream, but no plugin's OnRequest changed it", n)
			}
		}
	}
}

func p33HeadersAfterHead(t *T) {
	failOnWarnings(t, streamScenarios(), "P33", "after the response head")
}

func p34RejectionHeaders(t *T) {
	failOnWarnings(t, exchangeAxis(), "P34", "dropped")
}

// failOnWarnings drives scs through a chain of the plugin and fails on
// every warning of rule whose message holds text: a change of the
// plugin's that the host refused.
func failOnWarnings(t *T, scs []scenario, rule, text string) {
	rg := newRig(t, pipeline.Options{})
	for _, sc := range numbered(scs) {
		o := rg.run(sc, nil, false)
		for _, w := range o.res.Warnings {
			if w.Rule == rule && strings.Contains(w.Msg, text) {
				t.ErrorAt(rule, o.at, "%s", w.Msg)
			}
		}
	}
}

func p36IdentityShape(t *T) {
	rg := newRig(t, pipeline.Options{})
	for _, sc := range numbered(exchangeAxis()) {
		checkIdentity(t, rg.run(sc, nil, false))
	}
}

// checkIdentity fails P36 when the exchange ended with an identity that
// has no subject or whose claims are not a JSON object (none is fine).
func checkIdentity(t *T, o outcome) {
	id := o.identity
	if id == nil {
		return
	}
	if id.Subject == "" {
		t.ErrorAt("P36", o.at, "the identity has no subject: %+v", *id)
	}
	if len(id.Claims) > 0 {
		var m map[string]any
		if err := json.Unmarshal(id.Claims, &m); err != nil {
			t.ErrorAt("P36", o.at, "the identity's claims are not a JSON object: %v", err)
		}
	}
}
