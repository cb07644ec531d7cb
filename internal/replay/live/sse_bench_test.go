package live

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sseEvents is how many events the upstream of BenchmarkSSEStream sends.
const sseEvents = 200

// sseUpstream answers every request with sseEvents SSE events written as
// fast as it can, without flushing between them: net/http cuts them into
// a few writes of its 4 KiB buffer, as a fast upstream on loopback does.
func sseUpstream(tb testing.TB) *httptest.Server {
	var body strings.Builder
	for i := range sseEvents {
		fmt.Fprintf(&body, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token %d of the answer\"}}]}\n\n", i)
	}
	events := body.String()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for rest := events; rest != ""; {
			i := strings.Index(rest, "\n\n") + 2
			io.WriteString(w, rest[:i])
			rest = rest[i:]
		}
	}))
	tb.Cleanup(up.Close)
	return up
}

// countingListener counts the writes of every connection it accepts: one
// per write(2) of the server on it.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// reverseProxy is the peer serve is measured against on streams: a bare
// httputil.ReverseProxy that flushes after every read of the upstream
// (FlushInterval -1), on a listener that counts its writes.
func reverseProxy(tb testing.TB, up string, writes *atomic.Int64) string {
	tb.Helper()
	target, err := url.Parse(up)
	if err != nil {
		tb.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     tr,
		FlushInterval: -1,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(countingListener{ln, writes})
	tb.Cleanup(func() { srv.Close(); tr.CloseIdleConnections() })
	return "http://" + ln.Addr().String()
}

// BenchmarkSSEStream relays a 200-event SSE answer through a bare
// httputil.ReverseProxy (FlushInterval -1) and through serve (tracing and
// the ring on) with a 1-plugin and a 6-plugin pass-through chain and
// inference-parser + guardrail, 16 connections at once, over keep-alive
// loopback HTTP. It reports streams/s, CPU per stream and the proxy's
// writes to the client connection per stream (the write(2) calls); each
// stream is checked whole, and the ones cut are counted (cut). docs/perf.md
// has the figures.
func BenchmarkSSEStream(b *testing.B) {
	up := sseUpstream(b)
	type target struct {
		name   string
		url    string
		writes *atomic.Int64
	}
	var targets []target
	add := func(name string, url func(*atomic.Int64) string) {
		w := new(atomic.Int64)
		targets = append(targets, target{name, url(w), w})
	}
	add("bareproxy", func(w *atomic.Int64) string { return reverseProxy(b, up.URL, w) })
	serve := func(opts Options) func(*atomic.Int64) string {
		return func(w *atomic.Int64) string {
			srv, err := New(opts)
			if err != nil {
				b.Fatal(err)
			}
			return serveOn(b, srv, func(ln net.Listener) net.Listener { return countingListener{ln, w} })
		}
	}
	add("serve-1pass", serve(passOptions(b, up.URL, 1, Options{})))
	add("serve-6pass", serve(passOptions(b, up.URL, 6, Options{})))
	add("serve-parser+guardrail", serve(chainOptions(b, up.URL, `outbound:
  - name: inference-parser
  - name: guardrail
    config:
      phrases: ["drop table"]
      status: 451
`, factories(), Options{})))
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			t.writes.Store(0)
			var cut atomic.Int64
			var firstCut atomic.Value
			cpu0 := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Post(t.url+"/v1/chat", "application/json", strings.NewReader(`{"stream":true}`))
					n := 0
					if err == nil {
						var body []byte
						body, err = io.ReadAll(resp.Body)
						resp.Body.Close()
						n = bytes.Count(body, []byte("data: "))
					}
					if err != nil || n != sseEvents {
						cut.Add(1)
						firstCut.CompareAndSwap(nil, fmt.Sprintf("%d event(s) of %d, %v", n, sseEvents, err))
					}
				}
			})
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "streams/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/stream")
			b.ReportMetric(float64(t.writes.Load())/float64(b.N), "writes/stream")
			// The bare proxy cuts an answer now and then under this load:
			// it is the peer, so that is counted and said, not failed.
			// serve must cut none.
			b.ReportMetric(float64(cut.Load()), "cut")
			switch {
			case cut.Load() > 0 && t.name == "bareproxy":
				b.Logf("%d of %d streams cut, the first: %v", cut.Load(), b.N, firstCut.Load())
			case cut.Load() > 0:
				b.Errorf("%d of %d streams cut, the first: %v", cut.Load(), b.N, firstCut.Load())
			}
		})
	}
}
