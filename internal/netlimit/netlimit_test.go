package netlimit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// hangGuard bounds every wait; it fires only when a bound is missing.
const hangGuard = 30 * time.Second

// serve runs h under l on 127.0.0.1 and returns the address.
func serve(t *testing.T, l Limits, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := l.Server(h)
	go srv.Serve(l.Listener(ln))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(hangGuard))
	return c
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	_, _ = io.WriteString(w, "ok")
})

// get sends one keep-alive GET on c and reads its answer.
func get(t *testing.T, c net.Conn, br *bufio.Reader) *http.Response {
	t.Helper()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
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

// An idle keep-alive connection is closed by the server: without an idle
// timeout it stays open and the read below hits the hang guard.
func TestIdleConnectionClosed(t *testing.T) {
	addr := serve(t, Limits{Idle: 20 * time.Millisecond}, ok)
	c := dial(t, addr)
	br := bufio.NewReader(c)
	get(t, c, br)
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read %v, want EOF (closed by the server)", err)
	}
}

// A body that never finishes arriving is cut: the handler's read fails
// with ErrBodyTimeout and the connection ends.
func TestSlowBodyCut(t *testing.T) {
	got := make(chan error, 1)
	addr := serve(t, Limits{ReadBody: 20 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
	}))
	c := dial(t, addr)
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, ErrBodyTimeout) || !strings.Contains(err.Error(), "--read-body-timeout") {
			t.Fatalf("read error %v, want ErrBodyTimeout naming the flag", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("a body that never arrives was not cut")
	}
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("connection not closed: %v", err)
	}
}

// The body deadline is lifted once the body is read: a long answer after
// it keeps its context (the server's background read must not time out).
func TestBodyDeadlineLifted(t *testing.T) {
	const d = 20 * time.Millisecond
	addr := serve(t, Limits{ReadBody: d}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.WriteHeader(200)
		http.NewResponseController(w).Flush()
		// Let the body deadline pass (not an assertion of speed: what is
		// checked is that nothing happened meanwhile).
		time.Sleep(10 * d)
		if r.Context().Err() != nil {
			_, _ = io.WriteString(w, "cancelled")
			return
		}
		_, _ = io.WriteString(w, "alive")
	}))
	resp, err := http.Post("http://"+addr, "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "alive" {
		t.Fatalf("answer %q: the body deadline ended the request's context", b)
	}
}

// A client that reads nothing of a large answer is cut: the handler's
// write fails instead of blocking for ever.
func TestWriteToNonReaderCut(t *testing.T) {
	got := make(chan error, 1)
	addr := serve(t, Limits{Write: 20 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 1<<20)
		for range 256 { // 256 MiB: far past any socket buffer
			if _, err := w.Write(buf); err != nil {
				got <- err
				return
			}
		}
		got <- nil
	}))
	c := dial(t, addr)
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("the handler wrote 256 MiB to a client that reads nothing")
		}
	case <-time.After(hangGuard):
		t.Fatal("a write to a client that reads nothing was not cut")
	}
}

// Small writes, as serve relays an event stream (frames into the buffer,
// a flush per upstream read), to a client that reads nothing are cut too:
// the writes that stay in net/http's buffer skip the deadline, the ones
// that reach the connection do not.
func TestSmallWritesToNonReaderCut(t *testing.T) {
	for _, every := range []int{0, 1, 30} {
		t.Run(fmt.Sprintf("flush every %d", every), func(t *testing.T) {
			got := make(chan error, 1)
			addr := serve(t, Limits{Write: 20 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				frame := []byte("data: " + strings.Repeat("x", 90) + "\n\n")
				for i := range 4 << 20 { // 400 MiB: far past any socket buffer
					if _, err := w.Write(frame); err != nil {
						got <- err
						return
					}
					if every > 0 && i%every == 0 {
						if err := http.NewResponseController(w).Flush(); err != nil {
							got <- err
							return
						}
					}
				}
				got <- nil
			}))
			c := dial(t, addr)
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-got:
				if err == nil {
					t.Fatal("the handler wrote 400 MiB to a client that reads nothing")
				}
			case <-time.After(hangGuard):
				t.Fatal("small writes to a client that reads nothing were not cut")
			}
		})
	}
}

// Past MaxConns a connection is answered 503 and closed; once one closes,
// a new one is served.
func TestMaxConns(t *testing.T) {
	addr := serve(t, Limits{MaxConns: 2}, ok)
	held := make([]net.Conn, 2)
	for i := range held {
		held[i] = dial(t, addr)
		get(t, held[i], bufio.NewReader(held[i])) // accepted and idle
	}
	c := dial(t, addr)
	resp := get(t, c, bufio.NewReader(c))
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("connection past the bound: status %d, want 503", resp.StatusCode)
	}
	held[0].Close()
	deadline := time.Now().Add(hangGuard)
	for {
		c := dial(t, addr)
		if resp := get(t, c, bufio.NewReader(c)); resp.StatusCode == http.StatusOK {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("a closed connection's place was never given back")
		}
	}
}

func TestWithDefaults(t *testing.T) {
	l := Limits{Idle: -1}.WithDefaults()
	if l.Idle != 0 || l.ReadHeader != DefaultReadHeader || l.ReadBody != DefaultReadBody || l.Write != DefaultWrite || l.MaxConns < 32 {
		t.Fatalf("defaults %+v", l)
	}
}
