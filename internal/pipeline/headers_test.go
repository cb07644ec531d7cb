package pipeline

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// clientRec is a ClientWriter that keeps what the client got.
type clientRec struct {
	status int
	header http.Header
	body   []byte
}

func (c *clientRec) WriteHeader(s int, h http.Header) { c.status, c.header = s, h.Clone() }
func (c *clientRec) Write(p []byte) (int, error)      { c.body = append(c.body, p...); return len(p), nil }
func (c *clientRec) Flush()                           {}

func warned(res *Result, rule, sub string) bool {
	for _, w := range res.Warnings {
		if w.Rule == rule && strings.Contains(w.Msg, sub) {
			return true
		}
	}
	return false
}

// P32: a request header change is seen by later plugins and is what goes
// upstream; a framing header change is undone and reported.
func TestRequestHeaderChanges(t *testing.T) {
	log := &recLog{}
	var seen []string
	a := &fake{name: "a", log: log, req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		ex.Request.Header.Set("X-Stamp", "one")
		ex.Request.Header.Set("Authorization", "Bearer real-credential-0123456789")
		ex.Request.Header.Del("X-Drop")
		ex.Request.Header.Set("Content-Length", "999")
		return gateway.Continue()
	}}
	b := &fake{name: "b", log: log, req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		seen = []string{ex.Request.Header.Get("X-Stamp"), ex.Request.Header.Get("X-Drop")}
		return gateway.Continue()
	}}
	c := buildFakes(t, Options{}, a, b)
	rec := trace.NewRecorder()
	h := http.Header{"X-Drop": {"gone"}, "Content-Length": {"2"}, "Authorization": {"Bearer placeholder"}}
	x := c.NewExchange(Request{Request: gateway.Request{Method: "POST", URL: "/v1", Header: h}, Body: []byte("{}")}, ExchangeOptions{Trace: rec})
	if !x.Request(context.Background()) {
		t.Fatal("request denied")
	}
	if !slices.Equal(seen, []string{"one", ""}) {
		t.Errorf("later plugin saw X-Stamp, X-Drop = %q, want [one \"\"]", seen)
	}
	got := x.Gateway().Request.Header
	if got.Get("X-Stamp") != "one" || got.Get("Authorization") != "Bearer real-credential-0123456789" || got.Get("Content-Length") != "2" {
		t.Errorf("upstream header = %v, want the stamp, the new Authorization and the host's Content-Length", got)
	}
	x.Respond(context.Background(), Upstream{Status: 200, Header: jsonHeader(), Body: []byte("{}")})
	res := x.Finish()
	if !warned(res, "P32", "Content-Length") {
		t.Errorf("no P32 warning for the Content-Length change: %v", res.Warnings)
	}
	ev := rec.Events()[0]
	var names []string
	for _, hc := range ev.Headers {
		names = append(names, hc.Name)
		if hc.Name == "Authorization" && strings.Contains(strings.Join(hc.Values, ""), "real-credential") {
			t.Errorf("trace holds the credential: %+v", hc)
		}
		if hc.Name == "Content-Length" && hc.Refused == "" {
			t.Errorf("Content-Length change not marked refused: %+v", hc)
		}
		if hc.Name == "X-Drop" && !hc.Deleted {
			t.Errorf("X-Drop not marked deleted: %+v", hc)
		}
	}
	if !slices.Equal(names, []string{"Authorization", "Content-Length", "X-Drop", "X-Stamp"}) {
		t.Errorf("trace header changes = %v", names)
	}
}

// P33: OnResponse's header changes reach the client of a buffered response.
func TestResponseHeaderChangesBuffered(t *testing.T) {
	a := &fake{name: "a", log: &recLog{}, resp: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		ex.Response.Header.Set("X-Checked", "yes")
		ex.Response.Header.Del("Server")
		return gateway.Continue()
	}}
	c := buildFakes(t, Options{}, a)
	cl := &clientRec{}
	h := jsonHeader()
	h.Set("Server", "up")
	c.Run(context.Background(), Request{Request: gateway.Request{Method: "GET", URL: "/"}}, Upstream{Status: 200, Header: h, Body: []byte("{}")}, ExchangeOptions{Client: cl})
	if cl.header.Get("X-Checked") != "yes" || cl.header.Get("Server") != "" {
		t.Errorf("client header = %v", cl.header)
	}
}

// P33: a streamed response's head waits for the first frame's calls; a
// change made after it was sent is refused and reported.
func TestResponseHeaderChangesStream(t *testing.T) {
	n := 0
	a := &fake{name: "a", log: &recLog{}, stream: true, frame: func(_ context.Context, ex *gateway.Exchange, _ []byte, last bool) gateway.Action {
		n++
		switch n {
		case 1:
			ex.Response.Header.Set("X-First", "1")
		case 2:
			ex.Response.Header.Set("X-Late", "2")
		}
		return gateway.Continue()
	}}
	c := buildFakes(t, Options{}, a)
	cl := &clientRec{}
	body := []byte("data: one\n\ndata: two\n\n")
	res := c.Run(context.Background(), Request{Request: gateway.Request{Method: "GET", URL: "/"}}, Upstream{Status: 200, Header: sseHeader(), Body: body}, ExchangeOptions{Client: cl})
	if cl.header.Get("X-First") != "1" {
		t.Errorf("first frame's header change did not reach the client: %v", cl.header)
	}
	if cl.header.Get("X-Late") != "" || res.Header.Get("X-Late") != "" {
		t.Errorf("a change after the head reached the client: %v", cl.header)
	}
	if !warned(res, "P33", "X-Late") {
		t.Errorf("no P33 warning naming X-Late: %v", res.Warnings)
	}
	if string(cl.body) != string(body) {
		t.Errorf("body = %q", cl.body)
	}
}

// P34: a rejection's headers and body reach the client; framing headers
// stay the host's; the trace records them redacted.
func TestRejectionHeadersAndBody(t *testing.T) {
	a := &fake{name: "a", log: &recLog{}, req: func(context.Context, *gateway.Exchange) gateway.Action {
		return gateway.RejectWith(429, "slow down", gateway.Rejection{
			Header:      http.Header{"Retry-After": {"3"}, "Content-Length": {"1"}, "Set-Cookie": {"session=abcdef0123456789abcdef"}},
			Body:        []byte(`{"error":"rate_limited"}`),
			ContentType: "application/json",
		})
	}}
	c := buildFakes(t, Options{}, a)
	cl := &clientRec{}
	rec := trace.NewRecorder()
	res := c.Run(context.Background(), Request{Request: gateway.Request{Method: "GET", URL: "/"}}, Upstream{Status: 200}, ExchangeOptions{Client: cl, Trace: rec})
	if cl.status != 429 || cl.header.Get("Retry-After") != "3" || cl.header.Get("Content-Type") != "application/json" {
		t.Errorf("client got %d %v", cl.status, cl.header)
	}
	if string(cl.body) != `{"error":"rate_limited"}` || cl.header.Get("Content-Length") != "24" {
		t.Errorf("client body %q, Content-Length %q", cl.body, cl.header.Get("Content-Length"))
	}
	if !warned(res, "P34", "Content-Length") {
		t.Errorf("no P34 warning for the framing header: %v", res.Warnings)
	}
	ev := rec.Events()[0]
	if ev.Rejection == nil || ev.Rejection.Header["Retry-After"][0] != "3" || ev.Rejection.ContentType != "application/json" {
		t.Fatalf("trace rejection = %+v", ev.Rejection)
	}
	if strings.Contains(strings.Join(ev.Rejection.Header["Set-Cookie"], ""), "abcdef0123456789") {
		t.Errorf("trace holds the cookie: %v", ev.Rejection.Header)
	}
}

func TestChallengeAndRateLimited(t *testing.T) {
	a := gateway.Challenge("api", "invalid_token", "bad token")
	if a.Status != 401 || a.Rejection.Header.Get("WWW-Authenticate") != `Bearer realm="api", error="invalid_token"` {
		t.Errorf("Challenge = %+v", a)
	}
	r := gateway.RateLimited(1500*time.Millisecond, "quota")
	if r.Status != 429 || r.Rejection.Header.Get("Retry-After") != "2" {
		t.Errorf("RateLimited = %+v", r)
	}
}

// P36: an identity one plugin sets is seen by later plugins, by the
// response side and OnFinish, and not by the next exchange.
func TestIdentityForLaterPlugins(t *testing.T) {
	var got []string
	look := func(where string, ex *gateway.Exchange) {
		if id, ok := ex.Identity(); ok {
			got = append(got, where+":"+id.Subject)
		} else {
			got = append(got, where+":-")
		}
	}
	a := &fake{name: "a", log: &recLog{}, finish: true, req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		look("a.req", ex)
		if ex.Request.Header.Get("Authorization") != "" {
			ex.SetIdentity(gateway.Identity{Subject: "alice", Scopes: []string{"read"}})
		}
		return gateway.Continue()
	}, fin: func(_ context.Context, ex *gateway.Exchange) error { look("a.fin", ex); return nil }}
	b := &fake{name: "b", log: &recLog{}, req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		look("b.req", ex)
		return gateway.Continue()
	}, resp: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		look("b.resp", ex)
		return gateway.Continue()
	}}
	c := buildFakes(t, Options{}, a, b)
	up := Upstream{Status: 200, Header: jsonHeader(), Body: []byte("{}")}
	x := c.NewExchange(Request{Request: gateway.Request{Method: "GET", URL: "/", Header: http.Header{"Authorization": {"Bearer t"}}}}, ExchangeOptions{})
	if x.Request(context.Background()) {
		x.Respond(context.Background(), up)
	}
	x.Finish()
	if !x.Reset(Request{Request: gateway.Request{Method: "GET", URL: "/"}}, ExchangeOptions{}) {
		t.Fatal("Reset refused")
	}
	if x.Request(context.Background()) {
		x.Respond(context.Background(), up)
	}
	x.Finish()
	want := []string{"a.req:-", "b.req:alice", "b.resp:alice", "a.fin:alice", "a.req:-", "b.req:-", "b.resp:-", "a.fin:-"}
	if !slices.Equal(got, want) {
		t.Errorf("identity seen:\n got %v\nwant %v", got, want)
	}
}

// P35: the request's parts reach the plugins.
func TestRequestParts(t *testing.T) {
	var got gateway.Request
	a := &fake{name: "a", log: &recLog{}, req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		got = ex.Request
		return gateway.Continue()
	}}
	c := buildFakes(t, Options{}, a)
	req := gateway.Request{URL: "https://api.example.com/v1/chat?x=1"}
	req.FillTarget("ignored.example")
	c.Run(context.Background(), Request{Request: gateway.Request{Method: "GET", URL: req.URL, Scheme: req.Scheme, Host: req.Host, Path: req.Path, RawQuery: req.RawQuery, RemoteAddr: "127.0.0.1:5"}},
		Upstream{Status: 200}, ExchangeOptions{})
	if got.Scheme != "https" || got.Host != "api.example.com" || got.Path != "/v1/chat" || got.RawQuery != "x=1" || got.RemoteAddr != "127.0.0.1:5" {
		t.Errorf("request parts = %+v", got)
	}
	r := gateway.Request{URL: "/v1?a=b"}
	r.FillTarget("h.example:8080")
	if r.Scheme != "" || r.Host != "h.example:8080" || r.Path != "/v1" || r.RawQuery != "a=b" {
		t.Errorf("FillTarget of a path = %+v", r)
	}
}

// P32: a framing header written into the map under a name that is not
// canonical (h["transfer-encoding"]) is the host's too: dropped, warned.
func TestNonCanonicalFramingHeaderDropped(t *testing.T) {
	a := &fake{name: "a", log: &recLog{}, req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		ex.Request.Header["transfer-encoding"] = []string{"chunked"}
		ex.Request.Header["x-lower"] = []string{"kept"}
		return gateway.Continue()
	}}
	c := buildFakes(t, Options{}, a)
	x := c.NewExchange(Request{Request: gateway.Request{Method: "POST", URL: "/v1", Header: http.Header{}}, Body: []byte("{}")}, ExchangeOptions{})
	if !x.Request(context.Background()) {
		t.Fatal("request denied")
	}
	got := x.Gateway().Request.Header
	if _, ok := got["transfer-encoding"]; ok || got.Get("Transfer-Encoding") != "" {
		t.Errorf("upstream header = %v; the non-canonical framing header must be dropped", got)
	}
	if got["x-lower"] == nil {
		t.Errorf("upstream header = %v; a non-framing header stays as the plugin wrote it", got)
	}
	x.Respond(context.Background(), Upstream{Status: 200, Header: jsonHeader(), Body: []byte("{}")})
	if res := x.Finish(); !warned(res, "P32", "Transfer-Encoding") {
		t.Errorf("no P32 warning naming Transfer-Encoding: %v", res.Warnings)
	}
}
