package live

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/abkit/abkit/internal/netlimit"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/sdk/gateway"
)

// serve closes idle keep-alive connections and connections whose body
// never arrives, and answers past --max-conns with 503: 20,000 idle
// connections once used every file descriptor.
func TestServeBoundsClientConnections(t *testing.T) {
	up := newUpstream(t)
	s := startServe(t, up.URL, testChain, Options{Limits: netlimit.Limits{Idle: 20 * time.Millisecond, ReadBody: 20 * time.Millisecond, MaxConns: 3}}, time.Second)
	addr := strings.TrimPrefix(s.base, "http://")
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(hangGuard))
		return c, bufio.NewReader(c)
	}
	send := func(c net.Conn, br *bufio.Reader, req string) *http.Response {
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	const jsonReq = "GET /v1/json HTTP/1.1\r\nHost: x\r\n\r\n"

	t.Run("idle", func(t *testing.T) {
		c, br := dial()
		if resp := send(c, br, jsonReq); resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("idle connection: read %v, want EOF", err)
		}
	})
	t.Run("slow body", func(t *testing.T) {
		c, _ := dial()
		if _, err := io.WriteString(c, "POST /v1/json HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("a body that never arrives: connection still open (%v)", err)
		}
	})
	t.Run("max conns", func(t *testing.T) {
		// A server of its own: the connections above close a little after
		// the tests see them end. An event stream holds its connection;
		// three of them fill the bound, and the fourth is turned away.
		s := startServe(t, up.URL, testChain, Options{Limits: netlimit.Limits{MaxConns: 3}}, time.Second)
		addr := strings.TrimPrefix(s.base, "http://")
		dial := func() (net.Conn, *bufio.Reader) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			_ = c.SetDeadline(time.Now().Add(hangGuard))
			return c, bufio.NewReader(c)
		}
		for range 3 {
			c, br := dial()
			if _, err := io.WriteString(c, "GET "+PathEvents+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("subscribe: %v %v", resp, err)
			}
		}
		c, br := dial()
		if resp := send(c, br, jsonReq); resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("past --max-conns: status %d, want 503", resp.StatusCode)
		}
	})
}

// With an API token the API answers 401 without it and serves with it
// (bearer, or basic authentication as ui --attach sends it); the proxy
// is not affected. With NoAPI the API is 404.
func TestServeAPIToken(t *testing.T) {
	up := newUpstream(t)
	s := startServe(t, up.URL, testChain, Options{APIToken: "tok-123"}, time.Second)
	if code := get(t, s.base+PathExchanges, nil); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d, want 401", code)
	}
	req, _ := http.NewRequest("GET", s.base+PathExchanges, nil)
	req.Header.Set("Authorization", "Bearer tok-123")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("bearer token: %d", resp.StatusCode)
	}
	if code := get(t, strings.Replace(s.base, "http://", "http://:tok-123@", 1)+PathExchanges, nil); code != 200 {
		t.Fatalf("token in the URL: %d", code)
	}
	if code := get(t, strings.Replace(s.base, "http://", "http://:wrong@", 1)+PathExchanges, nil); code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", code)
	}
	if code := get(t, s.base+"/v1/json", nil); code != 200 {
		t.Fatalf("proxy: %d", code)
	}

	off := startServe(t, up.URL, testChain, Options{NoAPI: true}, time.Second)
	if code := get(t, off.base+PathEvents, nil); code != http.StatusNotFound {
		t.Fatalf("--no-api: %d, want 404", code)
	}
}

// hugeReason rejects every request with a 1 MiB reason.
type hugeReason struct{}

func (hugeReason) Name() string { return "huge-reason" }
func (hugeReason) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "rejects with a 1 MiB reason"}
}
func (hugeReason) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Reject(403, strings.Repeat("é", 1<<19))
}
func (hugeReason) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// A plugin's reason is capped where serve keeps it (the ring, the event
// log): 8 exchanges with reasons of hundreds of MiB once held 1.8 GiB.
func TestServeCapsReasons(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(path, []byte("outbound:\n  - name: huge-reason\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := []gateway.Factory{{Name: "huge-reason", New: func(json.RawMessage) (gateway.Plugin, error) { return hugeReason{}, nil }}}
	ch, err := replay.LoadChain(context.Background(), path, gateway.Outbound, fs)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close(context.Background())
	srv, err := New(Options{Upstream: "http://127.0.0.1:1", Chain: ch, Factories: fs})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln, time.Second); close(done) }()
	defer func() { cancel(); <-done }()
	base := "http://" + ln.Addr().String()
	events := subscribe(t, base)
	if code := get(t, base+"/v1/x", nil); code != 403 {
		t.Fatalf("status %d", code)
	}
	srv.Wait()
	ex, ok := srv.ring.get(1)
	if !ok {
		t.Fatal("exchange 1 not kept")
	}
	if n := len(ex.Reason); n > MaxReason+64 || !strings.Contains(ex.Reason, "more bytes cut") || !utf8.ValidString(ex.Reason) {
		t.Fatalf("kept reason: %d bytes, valid %v", n, utf8.ValidString(ex.Reason))
	}
	for _, e := range ex.Report.Events {
		if len(e.Reason) > MaxReason+64 {
			t.Fatalf("trace event reason of %d bytes kept", len(e.Reason))
		}
	}
	for {
		ev, err := readEvent(events)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.data) > 2*MaxReason+1024 {
			t.Fatalf("event %s of %d bytes", ev.name, len(ev.data))
		}
		if ev.name == "exchange_finished" {
			break
		}
	}
}
