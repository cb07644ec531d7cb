package runtimesuite

import (
	"fmt"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addPipelineBodyCases registers the cases of who sees and writes bodies (P4, P11, P17).
func addPipelineBodyCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		pcase("P11/bodies/nil-without-reader", []string{"P11"}, "without a body reader plugins see no request body; with one they do",
			"Two chains get a request with a body: with no plugin reading bodies the hook must see nil; with a reader it sees the body.",
			p11BodiesNilWithoutReader),
		pcase("P4/normalise/write-implies-read", []string{"P4", "P11"}, "a writer that does not declare reads_body still gets the bodies it may write",
			"A plugin declaring writes_request_body (then one declaring writes_response_body) without reads_body is the only plugin of the chain. By P4 the runtime must treat it as a body reader before anything reads the capabilities, so its OnRequest sees the request body and the response writer's OnResponse sees the response body. A runtime that reads the raw flags sees no reader and hands out no bodies.",
			p4NormaliseWriteImpliesRead),
		pcase("P17/body-write/declared-only", []string{"P17"}, "only the declared writer's change reaches the wire",
			"An undeclared plugin writes the request body, alone, then after the declared writer's write, and then the response body: upstream and the client must get the host's body or the declared writer's, never the undeclared one. The write must be refused (the later plugins see the body as it was, and a P17 warning names the plugin) or kept (they see the undeclared body, unreported); which is choice P17.undeclared-write, and anything else (a silent refusal) fails either way. Then the declared writer writes alone (reaches upstream).",
			p17BodyWriteDeclaredOnly),
	} {
		r.Add(c)
	}
}

func p11BodiesNilWithoutReader(t *conformance.T) {
	ex := &abkitv1.ExchangeSpec{Request: &abkitv1.HTTPRequest{Method: "POST", Url: "http://u/", HasBody: true, Body: []byte("hello")}, Upstream: jsonUpstream(`{}`)}
	calls, _ := pipe{plugs: chain(1), exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P11")
	for _, c := range calls {
		if c.Hook == "request" && c.ReqBody != nil {
			t.Errorf("P11", "no plugin reads bodies, yet OnRequest saw body %q", *c.ReqBody)
		}
	}
	calls, _ = pipe{plugs: []plug{{name: "r", caps: &abkitv1.Capabilities{ReadsBody: true}}}, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P11")
	for _, c := range calls {
		if c.Hook == "request" && (c.ReqBody == nil || *c.ReqBody != "hello") {
			t.Errorf("P11", "a body reader saw %v; want %q", c.ReqBody, "hello")
		}
	}
}

func p4NormaliseWriteImpliesRead(t *conformance.T) {
	ex := &abkitv1.ExchangeSpec{Request: &abkitv1.HTTPRequest{Method: "POST", Url: "http://u/", HasBody: true, Body: []byte("hello")}, Upstream: jsonUpstream(`{"r":1}`)}
	for _, c := range []struct {
		name string
		caps *abkitv1.Capabilities
	}{{"req-writer", &abkitv1.Capabilities{WritesRequestBody: true}}, {"resp-writer", &abkitv1.Capabilities{WritesResponseBody: true}}} {
		calls, _ := pipe{plugs: []plug{{name: c.name, caps: c.caps}}, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P4")
		sawReq, sawResp := false, false
		for _, k := range calls {
			if k.Hook == "request" {
				sawReq = true
				if k.ReqBody == nil || *k.ReqBody != "hello" {
					t.Errorf("P4", "%s (writes without reads_body) saw request body %v in OnRequest; want %q: a write capability implies reads_body", c.name, k.ReqBody, "hello")
				}
			}
			if k.Hook == "response" && c.name == "resp-writer" {
				sawResp = true
				if k.RespBody == nil || *k.RespBody != `{"r":1}` {
					t.Errorf("P4", "%s saw response body %v in OnResponse; want %q", c.name, k.RespBody, `{"r":1}`)
				}
			}
		}
		if !sawReq || (c.name == "resp-writer" && !sawResp) {
			t.Errorf("P4", "%s: calls %v; want OnRequest (and OnResponse for the response writer)", c.name, seq(calls))
		}
	}
}

func p17BodyWriteDeclaredOnly(t *conformance.T) {
	ex := &abkitv1.ExchangeSpec{Request: &abkitv1.HTTPRequest{Method: "POST", Url: "http://u/", HasBody: true, Body: []byte("orig")}, Upstream: jsonUpstream(`{}`)}
	reads := &abkitv1.Capabilities{ReadsBody: true}
	// What the later plugins see of an undeclared write, and whether it is
	// reported, is choice P17.undeclared-write; that it never reaches the
	// wire is the rule, for either alternative.
	kept := t.Alternative("P17.undeclared-write") == "kept"
	rogueWrite := on("request", -1, &abkitv1.ProbeReply{WriteRequestBody: true, Body: []byte("rogue")})
	calls, res := pipe{plugs: []plug{{name: "rogue", caps: reads, script: rogueWrite}, {name: "reader", caps: reads}}, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P17")
	if e := res.GetExchanges(); len(e) == 1 {
		if string(e[0].GetRequestBody()) != "orig" {
			t.Errorf("P17", "undeclared write: upstream body %q; want \"orig\": an undeclared write never reaches the wire", e[0].GetRequestBody())
		}
		p17UndeclaredSeen(t, calls, e[0], "reader", "request", false, "orig", kept)
	}
	pl := []plug{{name: "w", caps: &abkitv1.Capabilities{ReadsBody: true, WritesRequestBody: true}, script: on("request", -1, &abkitv1.ProbeReply{WriteRequestBody: true, Body: []byte("new")})}}
	_, res = pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P17")
	if e := res.GetExchanges(); len(e) == 1 && string(e[0].GetRequestBody()) != "new" {
		t.Errorf("P17", "the declared writer's body did not reach upstream: %q", e[0].GetRequestBody())
	}
	// After the declared writer's write, an undeclared one (by the response
	// writer, which reads bodies by P4 and may stand there by P9) leaves
	// the declared body on the wire; the declared writer's OnResponse is a
	// later call that sees the request body.
	pl = append(pl, plug{name: "rogue", caps: &abkitv1.Capabilities{WritesResponseBody: true}, script: rogueWrite})
	calls, res = pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P17")
	if e := res.GetExchanges(); len(e) == 1 {
		if string(e[0].GetRequestBody()) != "new" {
			t.Errorf("P17", "an undeclared write after the declared writer's: upstream body %q; want the declared writer's \"new\"", e[0].GetRequestBody())
		}
		p17UndeclaredSeen(t, calls, e[0], "w", "response", false, "new", kept)
	}
	// The response side: an undeclared response write before a reader
	// of the reverse walk, and never to the client.
	rogueResp := on("response", -1, &abkitv1.ProbeReply{WriteResponseBody: true, Body: []byte("rogue")})
	calls, res = pipe{plugs: []plug{{name: "reader", caps: reads}, {name: "rogue", caps: reads, script: rogueResp}}, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P17")
	if e := res.GetExchanges(); len(e) == 1 {
		if string(e[0].GetBody()) != `{}` {
			t.Errorf("P17", "undeclared response write: the client got %q; want the upstream's {}", e[0].GetBody())
		}
		p17UndeclaredSeen(t, calls, e[0], "reader", "response", true, `{}`, kept)
	}
}

// p17UndeclaredSeen checks rogue's undeclared write of "rogue" to the
// request (or response) body, as the later call (probe's hook) saw it.
// The rule: the write is refused and reported (that call sees the body as
// it was, orig, and a P17 warning names rogue) or kept (it sees "rogue"
// and nothing is reported); anything else, such as a silent refusal, is a
// failure under either alternative. Which of the two is choice
// P17.undeclared-write.
func p17UndeclaredSeen(t *conformance.T, calls []Call, x *abkitv1.ExchangeRun, probe, hook string, resp bool, orig string, kept bool) {
	var saw []string
	sawOrig, sawKept := true, true
	for _, c := range calls {
		if c.Probe != probe || c.Hook != hook {
			continue
		}
		b := c.ReqBody
		if resp {
			b = c.RespBody
		}
		if b == nil {
			saw, sawOrig, sawKept = append(saw, "none"), false, false
			continue
		}
		saw = append(saw, *b)
		sawOrig, sawKept = sawOrig && *b == orig, sawKept && *b == "rogue"
	}
	if len(saw) == 0 {
		t.Errorf("P17", "%s's %s was not called: calls %v", probe, hook, seq(calls))
		return
	}
	warned := false
	for _, w := range x.GetWarnings() {
		warned = warned || (w.GetRule() == "P17" && w.GetPlugin() == "rogue")
	}
	got := fmt.Sprintf("%s's %s saw %q after rogue's undeclared write; P17 warning naming rogue: %v", probe, hook, saw, warned)
	switch {
	case !(sawOrig && warned) && !(sawKept && !warned):
		t.Errorf("P17", "%s; want %q and the warning (refused), or \"rogue\" and none (kept): %v", got, orig, x.GetWarnings())
	case sawKept != kept:
		t.ChoiceErrorf("P17.undeclared-write", "P17", "%s; want the write %s", got, t.Alternative("P17.undeclared-write"))
	}
}
