package pluginhost_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// headerPlugin changes request and response headers, sets an identity,
// reads the request's parts and rejects with a challenge on demand: what
// a gateway plugin does (P32-P36), the same in and out of process.
type headerPlugin struct{}

func (headerPlugin) Name() string { return "header-plugin" }
func (headerPlugin) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Changes headers and sets an identity for the boundary tests"}
}

func (headerPlugin) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	r := &ex.Request
	if r.Header.Get("X-Deny") != "" {
		return gateway.Challenge("abkit", "invalid_token", "no valid token")
	}
	if r.Header.Get("X-Limit") != "" {
		return gateway.RejectWith(429, "limited", gateway.Rejection{Header: http.Header{"Retry-After": {"7"}},
			Body: []byte(`{"error":"limited"}`), ContentType: "application/json"})
	}
	r.Header.Set("X-Stamp", r.Scheme+"|"+r.Host+"|"+r.Path+"|"+r.RawQuery+"|"+r.RemoteAddr)
	r.Header.Set("Authorization", "Bearer swapped")
	r.Header.Del("X-Drop")
	r.Header.Set("Content-Length", "12345") // the host's: undone
	ex.SetIdentity(gateway.Identity{Subject: "alice", ClientID: "cli", Scopes: []string{"a", "b"}, Claims: json.RawMessage(`{"tier":"gold"}`)})
	return gateway.Continue()
}

func (headerPlugin) OnResponse(_ context.Context, ex *gateway.Exchange) gateway.Action {
	ex.Response.Header.Set("X-Resp", "seen")
	ex.Response.Header.Del("Server")
	return gateway.Continue()
}

func (headerPlugin) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	switch {
	case last && ex.Response.Header.Get("Content-Type") != "text/event-stream":
		// P22: a buffered response's one call, before the head is sent.
		ex.Response.Header.Set("X-Resp", "seen")
		ex.Response.Header.Del("Server")
	case last:
	case ex.Response.Header.Get("X-First") == "":
		ex.Response.Header.Set("X-First", "1")
	default:
		ex.Response.Header.Set("X-Late", "refused")
	}
	return gateway.Continue()
}

// identityReader is an in-process plugin after the header plugin: it
// copies what it sees into response headers, and OnFinish records it.
type identityReader struct{ fin *[]string }

func (identityReader) Name() string { return "identity-reader" }
func (identityReader) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Reads the identity and headers a plugin before it set"}
}
func (identityReader) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	id, ok := ex.Identity()
	if ok {
		ex.Request.Header.Set("X-Seen-Identity", id.Subject+"|"+id.ClientID+"|"+string(id.Claims))
	}
	ex.Request.Header.Set("X-Seen-Stamp", ex.Request.Header.Get("X-Stamp"))
	return gateway.Continue()
}
func (identityReader) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (r identityReader) OnFinish(_ context.Context, ex *gateway.Exchange) error {
	id, ok := ex.Identity()
	if ok {
		*r.fin = append(*r.fin, id.Subject)
	} else {
		*r.fin = append(*r.fin, "-")
	}
	return nil
}

func headerPluginFactory() *gateway.Factory {
	return &gateway.Factory{Name: "header-plugin", New: func(json.RawMessage) (gateway.Plugin, error) { return headerPlugin{}, nil }}
}

func serveHeaderHelper(mode string) bool {
	if mode != "header-plugin" {
		return false
	}
	sdk.Serve(sdk.Plugin{Name: "header-plugin", Description: "Changes headers and sets an identity for the boundary tests",
		Pipeline: headerPluginFactory()})
	return true
}

type headerRun struct {
	Events   []trace.Event
	Status   int
	Header   http.Header
	Body     string
	Upstream http.Header
	Outcome  gateway.Outcome
	Warnings []pipeline.Warning
	Finished []string
}

func runHeaders(t *testing.T, f gateway.Factory) []headerRun {
	t.Helper()
	var fin []string
	reader := gateway.Factory{Name: "identity-reader", New: func(json.RawMessage) (gateway.Plugin, error) { return identityReader{fin: &fin}, nil }}
	c, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{{Plugin: "header-plugin"}, {Plugin: "identity-reader"}}},
		[]gateway.Factory{f, reader}, pipeline.Options{})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	req := func(extra ...string) pipeline.Request {
		h := http.Header{"Authorization": {"Bearer placeholder"}, "X-Drop": {"x"}, "Content-Length": {"2"}}
		for i := 0; i+1 < len(extra); i += 2 {
			h.Set(extra[i], extra[i+1])
		}
		return pipeline.Request{Request: gateway.Request{Method: "POST", URL: "https://api.example.com/v1/chat?model=m", Scheme: "https", Host: "api.example.com",
			Path: "/v1/chat", RawQuery: "model=m", RemoteAddr: "127.0.0.1:40000", Header: h}, Body: []byte("{}")}
	}
	buffered := pipeline.Upstream{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "Server": {"up"}}, Body: []byte(`{"ok":true}`)}
	stream := pipeline.Upstream{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte("data: one\n\ndata: two\n\n")}
	var out []headerRun
	for _, x := range []struct {
		req pipeline.Request
		up  pipeline.Upstream
	}{{req(), buffered}, {req(), stream}, {req("X-Deny", "1"), buffered}, {req("X-Limit", "1"), buffered}} {
		fin = fin[:0]
		rec := trace.NewRecorder()
		var client pipeline.BufferClient
		e := c.NewExchange(x.req, pipeline.ExchangeOptions{Trace: rec, Client: &client})
		var up http.Header
		if e.Request(context.Background()) {
			up = e.Gateway().Request.Header.Clone()
			e.Respond(context.Background(), x.up)
		}
		r := e.Finish()
		o := r.Outcome
		o.Duration = 0
		out = append(out, headerRun{Events: trace.WithoutDurations(rec.Events()), Status: client.Status, Header: client.Header,
			Body: client.Body.String(), Upstream: up, Outcome: o, Warnings: r.Warnings, Finished: append([]string(nil), fin...)})
	}
	return out
}

// Header changes, rejections with headers and a body, the request's parts
// and the identity behave the same in and out of process (P32-P36).
func TestHeadersSameInAndOutOfProcess_P32_P33_P34_P35_P36(t *testing.T) {
	local := runHeaders(t, *headerPluginFactory())
	f, _ := loadMode(t, "header-plugin").Factory()
	remote := runHeaders(t, f)
	for i := range local {
		if !reflect.DeepEqual(local[i], remote[i]) {
			t.Errorf("exchange %d differs:\n in-process     %+v\n out of process %+v", i, local[i], remote[i])
		}
	}
	l := local[0]
	if got := l.Upstream.Get("X-Stamp"); got != "https|api.example.com|/v1/chat|model=m|127.0.0.1:40000" {
		t.Errorf("X-Stamp = %q", got)
	}
	if l.Upstream.Get("Authorization") != "Bearer swapped" || l.Upstream.Get("X-Drop") != "" || l.Upstream.Get("Content-Length") != "2" {
		t.Errorf("upstream header = %v", l.Upstream)
	}
	if got := l.Upstream.Get("X-Seen-Identity"); got != `alice|cli|{"tier":"gold"}` {
		t.Errorf("later plugin saw identity %q", got)
	}
	if l.Header.Get("X-Resp") != "seen" || l.Header.Get("Server") != "" {
		t.Errorf("client header = %v", l.Header)
	}
	if s := local[1]; s.Header.Get("X-First") != "1" || s.Header.Get("X-Late") != "" {
		t.Errorf("stream client header = %v", s.Header)
	}
	if d := local[2]; d.Status != 401 || d.Header.Get("Www-Authenticate") != `Bearer realm="abkit", error="invalid_token"` {
		t.Errorf("challenge: %d %v", d.Status, d.Header)
	}
	if d := local[3]; d.Status != 429 || d.Header.Get("Retry-After") != "7" || d.Body != `{"error":"limited"}` {
		t.Errorf("limited: %d %v %q", d.Status, d.Header, d.Body)
	}
	if !reflect.DeepEqual(l.Finished, []string{"alice"}) {
		t.Errorf("OnFinish saw %v", l.Finished)
	}
}
