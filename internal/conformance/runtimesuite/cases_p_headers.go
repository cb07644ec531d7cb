package runtimesuite

import (
	"encoding/json"
	"net/http"
	"strings"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"

	"github.com/abkit/abkit/internal/conformance"
)

// addPipelineHeaderCases registers the cases of what a gateway plugin sees and changes: header changes, rejections with headers and a body, the request's parts and an identity for later plugins (P32-P36).
func addPipelineHeaderCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		pcase("P32/headers/reach-upstream", []string{"P32"}, "request header changes in OnRequest are seen by later plugins and reach the upstream; framing headers stay the host's",
			"p0's OnRequest sets X-Stamp, replaces X-Replace, deletes X-Drop and sets Content-Length; p1's OnRequest must see the first three changes, and the request header that goes upstream must carry them, "+
				"but not p0's Content-Length (a framing header, the host's).",
			p32HeadersReachUpstream),
		pcase("P33/headers/response", []string{"P33"}, "response header changes reach the client: in OnResponse, and in a stream's first frame call; a later one is refused and reported",
			"A buffered exchange: p0's OnResponse sets X-Resp and deletes X-Server; the client must get that. A streamed exchange: p0 sets X-First in the first frame call and X-Late in the second; "+
				"the client must get X-First, must not get X-Late, and the runtime must report the refused change as a P33 warning.",
			p33HeadersResponse),
		pcase("P34/rejection/headers-body", []string{"P34"}, "a rejection's headers and body reach the client with its status",
			"p0 rejects with 401, WWW-Authenticate, a JSON body and its content type; the client must get all four, and the body's length as the host frames it.",
			p34RejectionHeadersBody),
		pcase("P35/request/parts", []string{"P35"}, "plugins see the request's scheme, host, path, query and client address as the host has them",
			"The exchange's request has a scheme, host, path, raw query and remote address; every OnRequest must see them as given.",
			p35RequestParts),
		pcase("P36/identity/later-hooks", []string{"P36"}, "an identity set in OnRequest is seen by every later hook, OnFinish included, and never by another exchange",
			"p0's OnRequest sets an identity in the first exchange only; p0 must not see it before setting it, p1's OnRequest, both OnResponse and both OnFinish calls must see it, "+
				"and no call of the second exchange may see it.",
			p36IdentityLaterHooks),
	} {
		r.Add(c)
	}
}

func p32HeadersReachUpstream(t *conformance.T) {
	pl := chain(2)
	pl[0].script = on("request", -1, &abkitv1.ProbeReply{RequestHeader: &abkitv1.HeaderDelta{
		Set:     []*abkitv1.Header{{Name: "X-Stamp", Values: []string{"p0"}}, {Name: "X-Replace", Values: []string{"new"}}, {Name: "Content-Length", Values: []string{"999"}}},
		Deleted: []string{"X-Drop"}}})
	ex := exchange(jsonUpstream(`{}`))
	ex.Request.Header = []*abkitv1.Header{{Name: "X-Replace", Values: []string{"old"}}, {Name: "X-Drop", Values: []string{"x"}}}
	calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P32")
	want := http.Header{"X-Stamp": {"p0"}, "X-Replace": {"new"}}
	for _, c := range calls {
		if c.Probe == "p1" && c.Hook == "request" {
			checkHeader(t, "P32", "p1's OnRequest", c.ReqHeader, want, "X-Drop")
		}
	}
	if e := res.GetExchanges(); len(e) == 1 {
		if !e[0].GetUpstreamCalled() {
			t.Errorf("P32", "the upstream was not called")
			return
		}
		up := abkitv1.HeaderFromProto(e[0].GetUpstreamHeader())
		checkHeader(t, "P32", "the upstream request", up, want, "X-Drop")
		if up.Get("Content-Length") == "999" {
			t.Errorf("P32", "the upstream request carries p0's Content-Length 999; framing headers are the host's")
		}
	}
}

func p33HeadersResponse(t *conformance.T) {
	pl := chain(1)
	pl[0].script = on("response", -1, &abkitv1.ProbeReply{ResponseHeader: &abkitv1.HeaderDelta{
		Set: []*abkitv1.Header{{Name: "X-Resp", Values: []string{"p0"}}}, Deleted: []string{"X-Server"}}})
	up := jsonUpstream(`{}`)
	up.Header = append(up.Header, &abkitv1.Header{Name: "X-Server", Values: []string{"up"}})
	_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(up)}}.run(t, "P33")
	if e := res.GetExchanges(); len(e) == 1 {
		checkHeader(t, "P33", "the client's response", abkitv1.HeaderFromProto(e[0].GetHeader()), http.Header{"X-Resp": {"p0"}}, "X-Server")
	}
	ps := chain(1, "stream")
	ps[0].script = func(c *Call) *abkitv1.ProbeReply {
		if c.Hook != "frame" || c.Last {
			return nil
		}
		name := map[int]string{0: "X-First", 1: "X-Late"}[c.FrameIndex]
		if name == "" {
			return nil
		}
		return &abkitv1.ProbeReply{ResponseHeader: &abkitv1.HeaderDelta{Set: []*abkitv1.Header{{Name: name, Values: []string{"p0"}}}}}
	}
	_, res = pipe{plugs: ps, exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(sseFrames(3), false))}}.run(t, "P33")
	if e := res.GetExchanges(); len(e) == 1 {
		h := abkitv1.HeaderFromProto(e[0].GetHeader())
		if h.Get("X-First") != "p0" {
			t.Errorf("P33", "the client did not get X-First, set in the first frame call before the head was sent: %v", h)
		}
		if h.Get("X-Late") != "" {
			t.Errorf("P33", "the client got X-Late, set after the head was sent")
		}
		reported := false
		for _, w := range e[0].GetWarnings() {
			reported = reported || (w.GetRule() == "P33" && strings.Contains(w.GetMessage(), "X-Late"))
		}
		if !reported {
			t.Errorf("P33", "no P33 warning names the refused X-Late change; warnings: %v", e[0].GetWarnings())
		}
	}
}

func p34RejectionHeadersBody(t *conformance.T) {
	body := `{"error":"invalid_token"}`
	rej := reject(401, "no token")
	rej.Action.Rejection = &abkitv1.Rejection{Header: []*abkitv1.Header{{Name: "Www-Authenticate", Values: []string{`Bearer realm="conformance"`}}},
		HasBody: true, Body: []byte(body), ContentType: "application/json"}
	pl := chain(1)
	pl[0].script = on("request", -1, rej)
	_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P34")
	if e := res.GetExchanges(); len(e) == 1 {
		h := abkitv1.HeaderFromProto(e[0].GetHeader())
		if e[0].GetStatus() != 401 || string(e[0].GetBody()) != body {
			t.Errorf("P34", "the client got %d %q; want 401 %q", e[0].GetStatus(), e[0].GetBody(), body)
		}
		checkHeader(t, "P34", "the denial", h, http.Header{"Www-Authenticate": {`Bearer realm="conformance"`}, "Content-Type": {"application/json"}})
	}
}

func p35RequestParts(t *conformance.T) {
	ex := exchange(jsonUpstream(`{}`))
	ex.Request = &abkitv1.HTTPRequest{Method: "GET", Url: "https://api.conformance.test/v1/items?limit=2", Scheme: "https", Host: "api.conformance.test",
		Path: "/v1/items", RawQuery: "limit=2", RemoteAddr: "192.0.2.7:41000"}
	calls, _ := pipe{plugs: chain(2), exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P35")
	for _, c := range calls {
		if c.Hook != "request" {
			continue
		}
		q := c.Request
		if q == nil {
			t.Errorf("P35", "%s's OnRequest call carries no request", c.Probe)
			continue
		}
		got := []string{q.GetScheme(), q.GetHost(), q.GetPath(), q.GetRawQuery(), q.GetRemoteAddr()}
		t.Diff("P35", c.Probe+"'s request parts (scheme, host, path, query, remote)", []string{"https", "api.conformance.test", "/v1/items", "limit=2", "192.0.2.7:41000"}, got)
	}
}

func p36IdentityLaterHooks(t *conformance.T) {
	id := `{"subject":"alice","client_id":"cli","scopes":["read"],"claims":{"tier":"gold"}}`
	pl := chain(2, "finish")
	pl[0].script = func(c *Call) *abkitv1.ProbeReply {
		if c.Hook == "request" && c.Exchange == 0 {
			return &abkitv1.ProbeReply{SetIdentityJson: []byte(id)}
		}
		return nil
	}
	calls, _ := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`)), exchange(jsonUpstream(`{}`))}}.run(t, "P36")
	for _, c := range calls {
		where := c.Probe + "." + c.Hook
		seen := c.Identity != ""
		switch {
		case c.Exchange == 1 && seen:
			t.Errorf("P36", "%s of the second exchange saw identity %s: it leaked between exchanges", where, c.Identity)
		case c.Exchange == 1:
		case c.Probe == "p0" && c.Hook == "request":
			if seen {
				t.Errorf("P36", "%s saw identity %s before any plugin set one", where, c.Identity)
			}
		case !seen:
			t.Errorf("P36", "%s saw no identity; p0 set one in OnRequest", where)
		default:
			var got struct {
				Subject  string   `json:"subject"`
				ClientID string   `json:"client_id"`
				Scopes   []string `json:"scopes"`
			}
			if err := json.Unmarshal([]byte(c.Identity), &got); err != nil || got.Subject != "alice" || got.ClientID != "cli" || len(got.Scopes) != 1 {
				t.Errorf("P36", "%s saw identity %s; want subject alice, client cli, scopes [read]", where, c.Identity)
			}
		}
	}
}

// checkHeader fails rule unless h has every value of want and none of
// absent.
func checkHeader(t *conformance.T, rule, what string, h, want http.Header, absent ...string) {
	for n, v := range want {
		if got := h.Values(n); strings.Join(got, "\x00") != strings.Join(v, "\x00") {
			t.Errorf(rule, "%s: header %s = %q; want %q", what, n, got, v)
		}
	}
	for _, n := range absent {
		if v := h.Values(n); len(v) > 0 {
			t.Errorf(rule, "%s: header %s = %q; want it deleted", what, n, v)
		}
	}
}
