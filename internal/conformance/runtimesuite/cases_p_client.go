package runtimesuite

import (
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addPipelineClientCases registers the cases of what the client gets: reject statuses, deny, error and cancel responses, a reject in OnResponse (P15, P16).
func addPipelineClientCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		pcase("P15/reject-status/range", []string{"P15"}, "a reject status outside 400–599 becomes 403 with a warning; 400 and 599 stand",
			"One plugin rejects six exchanges in OnRequest with statuses 0, 200, 399, 400, 599 and 600. The outcome and the client status must be the plugin's status when it lies in 400–599 and 403 otherwise, and only the replaced statuses come with a warning.",
			p15RejectStatusRange),
		pcase("P15/client/responses", []string{"P15", "P16"}, "what the client gets: a deny's reason, 502 for an upstream error, 500 for a panic, 499 for a cancelled request",
			"Four exchanges: p0 denies with 451 and a reason (the client gets 451 and the reason as text), the upstream fails (502, the status text only, the detail stays in the outcome), p0 panics in OnRequest (500), the client is gone before the chain (499, reason \"request cancelled\").",
			p15ClientResponses),
		pcase("P16/response-deny/buffered", []string{"P16", "P15"}, "a reject in OnResponse reaches the client: its status and reason, no upstream body",
			"Two plain plugins; p0 (the last to get OnResponse) rejects with 451 and a reason. The client must get 451 and the reason, not the upstream's body; the outcome is a deny by p0.",
			p16ResponseDenyBuffered),
	} {
		r.Add(c)
	}
}

func p15RejectStatusRange(t *conformance.T) {
	statuses := []int32{0, 200, 399, 400, 599, 600}
	var exs []*abkitv1.ExchangeSpec
	for range statuses {
		exs = append(exs, exchange(jsonUpstream(`{}`)))
	}
	pl := chain(1)
	pl[0].script = func(c *Call) *abkitv1.ProbeReply {
		if c.Hook == "request" {
			return reject(statuses[c.Exchange], "no")
		}
		return nil
	}
	_, res := pipe{plugs: pl, exchanges: exs}.run(t, "P15")
	e := res.GetExchanges()
	if len(e) != len(statuses) {
		t.Fatalf("P15", "%d exchange results; want %d", len(e), len(statuses))
	}
	// 400–599 stand in every implementation (a rule); what
	// becomes of the others is a choice (P15.reject-status).
	asGiven := t.Alternative("P15.reject-status") == "as-given"
	for i, s := range statuses {
		want, warn, choice := s, false, ""
		if s < 400 || s > 599 {
			want, warn, choice = 403, true, "P15.reject-status"
			if asGiven && (s < 100 || s > 599) {
				continue // not an HTTP status: as-given says nothing of it
			}
			if asGiven {
				want, warn = s, false
			}
		}
		errorf := func(format string, args ...any) {
			if choice != "" {
				t.ChoiceErrorf(choice, "P15", format, args...)
			} else {
				t.Errorf("P15", format, args...)
			}
		}
		o := e[i].GetOutcome()
		if o.GetKind() != "deny" || o.GetStatus() != want || e[i].GetStatus() != want {
			errorf("reject with status %d: outcome %v, client status %d; want deny %d", s, o, e[i].GetStatus(), want)
		}
		if got := len(e[i].GetWarnings()) > 0; got != warn {
			errorf("reject with status %d: warning given %v; want %v (%v)", s, got, warn, e[i].GetWarnings())
		}
	}
}

func p15ClientResponses(t *conformance.T) {
	pl := chain(1, "finish")
	pl[0].script = func(c *Call) *abkitv1.ProbeReply {
		switch {
		case c.Hook == "request" && c.Exchange == 0:
			return reject(451, "blocked for a reason")
		case c.Hook == "request" && c.Exchange == 2:
			return &abkitv1.ProbeReply{Panic: true}
		}
		return nil
	}
	cancelled := exchange(jsonUpstream(`{}`))
	cancelled.Cancelled = true
	_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{
		exchange(jsonUpstream(`{}`)), exchange(&abkitv1.UpstreamSpec{Error: "connection refused by 10.0.0.9"}),
		exchange(jsonUpstream(`{}`)), cancelled}}.run(t, "P15")
	e := res.GetExchanges()
	if len(e) != 4 {
		t.Fatalf("P15", "%d exchange results; want 4", len(e))
	}
	if e[0].GetStatus() != 451 {
		t.Errorf("P15", "deny: client got status %d; want 451", e[0].GetStatus())
	}
	if !denyBody(t, e[0].GetBody(), "blocked for a reason") {
		t.ChoiceErrorf("P15.deny-wire", "P15", "deny: client body %q; want the reason %q (%s)", e[0].GetBody(), "blocked for a reason", t.Alternative("P15.deny-wire"))
	}
	if o := e[0].GetOutcome(); o.GetDeniedBy() != "p0" {
		t.Errorf("P29", "deny outcome %v; want denied by p0", o)
	}
	if o := e[0].GetOutcome(); o.GetReason() != "blocked for a reason" && t.Alternative("P29.outcome") == "reason" {
		t.ChoiceErrorf("P29.outcome", "P29", "deny outcome %v; want reason %q", o, "blocked for a reason")
	}
	if e[1].GetStatus() != 502 || e[1].GetOutcome().GetKind() != "error" || e[1].GetOutcome().GetStatus() != 502 {
		t.Errorf("P16", "upstream error: client status %d, outcome %v; want 502 and an error outcome of 502", e[1].GetStatus(), e[1].GetOutcome())
	}
	if strings.Contains(string(e[1].GetBody()), "10.0.0.9") {
		t.Errorf("P16", "upstream error: the client body %q carries the internal detail; want the status text only", e[1].GetBody())
	}
	if t.Alternative("P15.deny-wire") == "text" && (e[2].GetStatus() != 500 || e[2].GetOutcome().GetKind() != "error") {
		t.ChoiceErrorf("P15.deny-wire", "P15", "panic in OnRequest: client status %d, outcome %v; want 500 and an error outcome", e[2].GetStatus(), e[2].GetOutcome())
	}
	if o := e[3].GetOutcome(); e[3].GetStatus() != 499 || o.GetStatus() != 499 || !e[3].GetCancelled() {
		t.Errorf("P15", "cancelled request: client status %d, outcome %v, cancelled %v; want 499", e[3].GetStatus(), o, e[3].GetCancelled())
	}
	if o := e[3].GetOutcome(); o.GetReason() != "request cancelled" && t.Alternative("P29.outcome") == "reason" {
		t.ChoiceErrorf("P29.outcome", "P15", "cancelled request: outcome %v; want reason %q", o, "request cancelled")
	}
}

func p16ResponseDenyBuffered(t *conformance.T) {
	pl := chain(2)
	pl[0].script = on("response", -1, reject(451, "not this answer"))
	_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{"secret":"upstream"}`))}}.run(t, "P16")
	e := res.GetExchanges()
	if len(e) != 1 {
		t.Fatalf("P16", "%d exchange results; want 1", len(e))
	}
	if e[0].GetStatus() != 451 || strings.Contains(string(e[0].GetBody()), "upstream") {
		t.Errorf("P16", "client got %d %q; want 451 and none of the upstream's body", e[0].GetStatus(), e[0].GetBody())
	}
	if !denyBody(t, e[0].GetBody(), "not this answer") {
		t.ChoiceErrorf("P15.deny-wire", "P16", "client body %q; want the reason (%s)", e[0].GetBody(), t.Alternative("P15.deny-wire"))
	}
	if o := e[0].GetOutcome(); o.GetKind() != "deny" || o.GetDeniedBy() != "p0" || o.GetStatus() != 451 {
		t.Errorf("P16", "outcome %v; want deny 451 by p0", o)
	}
}
