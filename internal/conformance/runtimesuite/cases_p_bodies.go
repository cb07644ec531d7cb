package runtimesuite

import (
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
		pcase("P17/body-write/declared-only", []string{"P17"}, "only the declared request writer's change reaches upstream",
			"An undeclared plugin writes the request body (refused, warned); then the declared writer writes it (reaches upstream).",
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
	pl := []plug{{name: "rogue", caps: &abkitv1.Capabilities{ReadsBody: true}, script: on("request", -1, &abkitv1.ProbeReply{WriteRequestBody: true, Body: []byte("rogue")})}}
	_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P17")
	if e := res.GetExchanges(); len(e) == 1 && (string(e[0].GetRequestBody()) != "orig" || len(e[0].GetWarnings()) == 0) {
		t.Errorf("P17", "undeclared write: upstream body %q (want \"orig\"), %d warnings (want ≥1)", e[0].GetRequestBody(), len(e[0].GetWarnings()))
	}
	pl = []plug{{name: "w", caps: &abkitv1.Capabilities{ReadsBody: true, WritesRequestBody: true}, script: on("request", -1, &abkitv1.ProbeReply{WriteRequestBody: true, Body: []byte("new")})}}
	_, res = pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P17")
	if e := res.GetExchanges(); len(e) == 1 && string(e[0].GetRequestBody()) != "new" {
		t.Errorf("P17", "the declared writer's body did not reach upstream: %q", e[0].GetRequestBody())
	}
}
