package live

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/netlimit"
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
