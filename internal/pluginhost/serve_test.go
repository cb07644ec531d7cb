package pluginhost_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost/testdata/gatewayplugins"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/live"
	"github.com/abkit/abkit/sdk/gateway"
)

// recordingUpstream answers every request with a small JSON body and keeps
// what it received: method, target and headers, in a canonical text.
type recordingUpstream struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	u := &recordingUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var lines []string
		for n, v := range r.Header {
			if n == "Accept-Encoding" || n == "User-Agent" {
				continue // the transport's, the same both times
			}
			lines = append(lines, n+": "+strings.Join(v, ", "))
		}
		slices.Sort(lines)
		u.mu.Lock()
		u.got = append(u.got, fmt.Sprintf("%s %s\n%s\n\n%s", r.Method, r.URL.RequestURI(), strings.Join(lines, "\n"), body))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(u.Close)
	return u
}

// serveRaw serves the chain of fs behind a live server in front of up,
// sends each raw request on its own connection and returns each raw
// response with its Date header taken out.
func serveRaw(t *testing.T, up string, fs []gateway.Factory, reqs []string) []string {
	t.Helper()
	c, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{{Plugin: "bearer-gate"}, {Plugin: "header-stamp"}}}, fs, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	srv, err := live.New(live.Options{Upstream: up, Chain: &replay.Chain{Chain: c, Direction: gateway.Outbound}, Factories: fs})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, time.Second) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("serve did not stop")
		}
	}()
	var out []string
	for _, raw := range reqs {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(time.Minute)) // a hang guard only
		if _, err := io.WriteString(conn, raw); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Header.Del("Date")
		b, err := httputil.DumpResponse(resp, true)
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// An out-of-process plugin that stamps a request header and one that
// rejects with WWW-Authenticate behave byte for byte like their in-process
// builds behind abctl serve: what the client gets and what the upstream
// receives (P32, P34, P35, P36).
func TestServeSameInAndOutOfProcess_P32_P34(t *testing.T) {
	reqs := []string{
		"GET /v1/items?limit=2 HTTP/1.1\r\nHost: gw.example\r\nAuthorization: Bearer " + gatewayplugins.Token + "\r\nX-Internal: drop-me\r\nConnection: close\r\n\r\n",
		"POST /v1/items HTTP/1.1\r\nHost: gw.example\r\nAuthorization: Bearer " + gatewayplugins.Token + "\r\nContent-Type: application/json\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{\"a\":1}",
		"GET /v1/items HTTP/1.1\r\nHost: gw.example\r\nAuthorization: Bearer wrong\r\nConnection: close\r\n\r\n",
		"GET /v1/items HTTP/1.1\r\nHost: gw.example\r\nConnection: close\r\n\r\n",
	}
	upIn := newRecordingUpstream(t)
	in := serveRaw(t, upIn.URL, []gateway.Factory{gatewayplugins.GateFactory(), gatewayplugins.StampFactory()}, reqs)
	upOut := newRecordingUpstream(t)
	out := serveRaw(t, upOut.URL, remoteFactories(t, "bearergate", "headerstamp"), reqs)
	for i := range reqs {
		if in[i] != out[i] {
			t.Errorf("request %d: the client got different bytes\n in-process:\n%s\n out of process:\n%s", i, in[i], out[i])
		}
	}
	if !slices.Equal(upIn.got, upOut.got) {
		t.Errorf("the upstream received different requests\n in-process:\n%s\n out of process:\n%s", strings.Join(upIn.got, "\n--\n"), strings.Join(upOut.got, "\n--\n"))
	}
	if len(upIn.got) != 2 || !strings.Contains(upIn.got[0], "X-Gateway-Stamp: gw.example|/v1/items|limit=2|alice") ||
		!strings.Contains(upIn.got[0], "Authorization: Bearer upstream-credential") || strings.Contains(upIn.got[0], "X-Internal") {
		t.Errorf("the upstream received:\n%s", strings.Join(upIn.got, "\n--\n"))
	}
	if !strings.Contains(in[2], "401 Unauthorized") || !strings.Contains(in[2], `Www-Authenticate: Bearer realm="abkit-test", error="invalid_token"`) {
		t.Errorf("the rejected client got:\n%s", in[2])
	}
	if !strings.Contains(in[0], "X-Gateway: stamped") {
		t.Errorf("the allowed client got:\n%s", in[0])
	}
}
