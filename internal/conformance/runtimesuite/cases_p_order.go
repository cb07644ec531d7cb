package runtimesuite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addPipelineOrderCases registers the cases of the order of the chain's hooks, with and without a denier, cancellations and upstream errors (P15, P16, P26, P27).
func addPipelineOrderCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		pcase("P15/cancel/before-chain", []string{"P15", "P26"}, "a request cancelled before the chain is denied as cancelled; no OnRequest, no OnFinish",
			"Starts an exchange whose client context is already cancelled. No plugin may run OnRequest (and so none finishes), and the outcome must be a deny the runtime recognises as a cancellation.",
			p15CancelBeforeChain),
		pcase("P15/cancel/mid-chain", []string{"P15", "P26", "P27", "P28"}, "a client gone during p1's OnRequest: p2 never runs; p1, p0 finish with a live context",
			"The second probe cancels the client context from inside its OnRequest. The third probe's OnRequest must not run; the exchange is denied as cancelled; the two plugins whose OnRequest ran still finish, with a context that is not cancelled (P28).",
			p15CancelMidChain),
		pcase("P16/upstream-error/no-response", []string{"P16", "P26", "P27", "P29"}, "upstream did not answer: no OnResponse, every plugin finishes with an error outcome",
			"The upstream fails. OnResponse runs only when the upstream answered, so no plugin gets it; every plugin still finishes and sees an error outcome.",
			p16UpstreamErrorNoResponse),
	} {
		r.Add(c)
	}
	// P15, P16, P26, P27: order of request, response and finish, with and
	// without a denier, for 1, 6 and 20 plugins.
	for _, n := range []int{1, 6, 20} {
		for _, d := range []struct {
			name string
			at   int // -1: nobody denies
		}{{"allow", -1}, {"deny-first", 0}, {"deny-middle", n / 2}, {"deny-last", n - 1}} {
			if n == 1 && d.name == "deny-middle" {
				continue
			}
			n, at := n, d.at
			r.Add(pcase(fmt.Sprintf("P15/order/%d-plugins/%s", n, d.name), []string{"P15", "P16", "P26", "P27"},
				fmt.Sprintf("%d plugins, %s: OnRequest forward, OnResponse reverse, OnFinish LIFO incl. the denier", n, d.name),
				"Runs one exchange through a chain of finishing probes and compares the call sequence with the model: OnRequest in declaration order up to the denier; OnResponse in reverse order only when allowed; OnFinish in reverse order on every plugin whose OnRequest ran, the denier included. A failure shows the -want +got sequence: a runtime that iterates the response or finish phase forwards, or forgets the denier, differs here.",
				p15Order(n, at)))
		}
	}
}

func p15Order(n, at int) func(t *conformance.T) {
	return func(t *conformance.T) {
		pl := chain(n, "finish")
		if at >= 0 {
			pl[at].script = on("request", -1, reject(403, "denied by probe"))
		}
		calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P15")
		ran := names(n)
		if at >= 0 {
			ran = ran[:at+1]
		}
		want := cat(each(ran, "request"))
		if at < 0 {
			want = cat(want, each(rev(ran), "response"))
		}
		want = cat(want, each(rev(ran), "finish"))
		rule := "P15"
		got := seq(calls)
		switch {
		case !slices.Equal(seq(calls, "request"), each(ran, "request")):
			rule = "P15"
		case !slices.Equal(seq(calls, "response"), want[len(ran):len(want)-len(ran)]):
			rule = "P16"
		case !slices.Equal(seq(calls, "finish"), each(rev(ran), "finish")):
			rule = "P27"
			if len(seq(calls, "finish")) != len(ran) {
				rule = "P26"
			}
		}
		t.Diff(rule, "hook call sequence", want, got)
		if len(res.GetExchanges()) == 1 {
			o := res.Exchanges[0].GetOutcome()
			if at >= 0 && (o.GetKind() != "deny" || o.GetDeniedBy() != fmt.Sprintf("p%d", at) || res.Exchanges[0].GetStatus() != 403) {
				t.Errorf("P15", "outcome %v, client status %d; want a deny by p%d with status 403", o, res.Exchanges[0].GetStatus(), at)
			}
		}
	}
}

func p15CancelBeforeChain(t *conformance.T) {
	ex := exchange(jsonUpstream(`{}`))
	ex.Cancelled = true
	calls, res := pipe{plugs: chain(3, "finish"), exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P15")
	t.Diff("P15", "calls of a cancelled request", []string(nil), seq(calls))
	if e := res.GetExchanges(); len(e) != 1 || e[0].GetOutcome().GetKind() != "deny" || !e[0].GetCancelled() {
		t.Errorf("P15", "want a deny recognisable as cancellation, got %v", e)
	}
}

func p15CancelMidChain(t *conformance.T) {
	pl := chain(3, "finish")
	pl[1].script = on("request", -1, &abkitv1.ProbeReply{CancelClient: true})
	calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P15")
	want := []string{"p0.request", "p1.request", "p1.finish", "p0.finish"}
	t.Diff(finishRule("P15", want, seq(calls)), "calls", want, seq(calls))
	for _, c := range calls {
		if c.Hook == "finish" && c.CtxDone {
			t.Errorf("P28", "%s finished with a cancelled context: the finish context must not derive from the request", c.Probe)
		}
	}
	if e := res.GetExchanges(); len(e) != 1 || !e[0].GetCancelled() {
		t.Errorf("P15", "want the exchange denied as cancelled, got %v", e)
	}
}

func p16UpstreamErrorNoResponse(t *conformance.T) {
	ex := exchange(&abkitv1.UpstreamSpec{Error: "connection refused"})
	calls, _ := pipe{plugs: chain(3, "finish"), exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P16")
	want := []string{"p0.request", "p1.request", "p2.request", "p2.finish", "p1.finish", "p0.finish"}
	t.Diff(finishRule("P16", want, seq(calls)), "calls", want, seq(calls))
	for _, c := range calls {
		if c.Hook == "finish" && c.Outcome.GetKind() != "error" {
			t.Errorf("P29", "%s saw outcome %v; want error", c.Probe, c.Outcome)
		}
	}
}

// finishRule names the rule a call sequence differing from want breaks:
// P27 when only the order of the OnFinish calls differs, P26 when the
// other calls agree but the OnFinish calls do not, else rule.
func finishRule(rule string, want, got []string) string {
	split := func(xs []string) (other, fin []string) {
		for _, x := range xs {
			if strings.HasSuffix(x, ".finish") {
				fin = append(fin, x)
			} else {
				other = append(other, x)
			}
		}
		return other, fin
	}
	wo, wf := split(want)
	go_, gf := split(got)
	switch {
	case !slices.Equal(wo, go_) || slices.Equal(wf, gf):
		return rule
	case slices.Equal(sortedCopy(wf), sortedCopy(gf)):
		return "P27"
	default:
		return "P26"
	}
}
