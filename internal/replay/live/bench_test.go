package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/sdk/gateway"
)

// passThrough is a streaming plugin that continues everywhere: the
// benchmarks measure serve, not a plugin's work.
type passThrough struct{ name string }

func (p passThrough) Name() string { return p.name }
func (passThrough) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "continues everywhere"}
}
func (passThrough) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (passThrough) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (passThrough) OnResponseFrame(context.Context, *gateway.Exchange, []byte, bool) gateway.Action {
	return gateway.Continue()
}

// benchServe starts serve with a 6-plugin pass-through chain in front of
// up and returns its base URL.
func benchServe(b *testing.B, up string) string {
	_, base := passServe(b, up, Options{})
	return base
}

// passServe starts serve with opts and a 6-plugin pass-through chain in
// front of up, on 127.0.0.1, and stops it when tb ends.
func passServe(tb testing.TB, up string, opts Options) (*Server, string) {
	tb.Helper()
	srv, err := New(passOptions(tb, up, 6, opts))
	if err != nil {
		tb.Fatal(err)
	}
	return srv, serveOn(tb, srv, nil)
}

// passOptions returns opts with an n-plugin pass-through chain in front of
// up; the chain is closed when tb ends.
func passOptions(tb testing.TB, up string, n int, opts Options) Options {
	tb.Helper()
	var yaml strings.Builder
	yaml.WriteString("outbound:\n")
	var facs []gateway.Factory
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		fmt.Fprintf(&yaml, "  - name: %s\n", name)
		facs = append(facs, gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) { return passThrough{name}, nil }})
	}
	return chainOptions(tb, up, yaml.String(), facs, opts)
}

// chainOptions returns opts with the chain yaml declares, built from facs,
// in front of up; the chain is closed when tb ends.
func chainOptions(tb testing.TB, up, yaml string, facs []gateway.Factory, opts Options) Options {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "chain.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		tb.Fatal(err)
	}
	cf, err := catalog.ReadChainFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	ch, err := replay.LoadChain(context.Background(), path, gateway.Outbound, facs)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ch.Close(context.Background()) })
	opts.Upstream, opts.Chain, opts.ChainFile, opts.Factories = up, ch, cf, facs
	return opts
}

// serveOn serves srv on 127.0.0.1, its listener wrapped by wrap when set,
// and stops it when tb ends.
func serveOn(tb testing.TB, srv *Server, wrap func(net.Listener) net.Listener) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var l net.Listener = ln
	if wrap != nil {
		l = wrap(ln)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, l, time.Minute); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

func benchUpstream(b *testing.B) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, frame("first"))
			w.(http.Flusher).Flush()
			io.WriteString(w, frame("second"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	b.Cleanup(up.Close)
	return up
}

// BenchmarkExchange is one small JSON exchange (POST, 11-byte answer) over
// keep-alive loopback HTTP, straight to the upstream, through a bare
// net/http proxy (the floor of a second hop) and through serve with a
// 6-plugin chain, tracing and the ring on; one client at a time (latency)
// and 16 parallel clients (throughput in exchanges/s, and CPU per
// exchange). docs/perf.md has the figures.
func BenchmarkExchange(b *testing.B) {
	up := benchUpstream(b)
	base := benchServe(b, up.URL)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	do := func(b *testing.B, url string) {
		resp, err := c.Post(url, "application/json", strings.NewReader(`{"q":"hi"}`))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	bare := bareProxy(b, up.URL)
	for _, t := range []struct{ name, url string }{{"direct", up.URL + "/json"}, {"bareproxy", bare + "/json"}, {"serve", base + "/json"}} {
		b.Run(t.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				do(b, t.url)
			}
		})
		b.Run(t.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(8)
			cpu0 := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					do(b, t.url)
				}
			})
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "exchanges/s")
			// The harness (clients, serve, upstream) is one process: CPU
			// per exchange does not depend on what else the machine runs,
			// and 2 CPU-seconds over it is what 2 idle cores would serve.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/exch")
		})
	}
}

// bareProxy is the floor serve is measured against: a net/http server
// that forwards each request with a Transport and copies the answer back,
// with no chain, trace, ring or redaction. It shows what the second
// loopback hop itself costs.
func bareProxy(b *testing.B, up string) string {
	b.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}
	target, err := url.Parse(up)
	if err != nil {
		b.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Scheme, out.URL.Host = target.Scheme, target.Host
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close(); tr.CloseIdleConnections() })
	return "http://" + ln.Addr().String()
}

// cpuTime is the CPU this process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFirstStreamedByte is the time from sending a streamed request
// to reading its first SSE frame, straight to the upstream and through
// serve (6 plugins); the upstream flushes the first frame at once.
func BenchmarkFirstStreamedByte(b *testing.B) {
	up := benchUpstream(b)
	base := benchServe(b, up.URL)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	for _, t := range []struct{ name, url string }{{"direct", up.URL + "/stream"}, {"serve", base + "/stream"}} {
		b.Run(t.name, func(b *testing.B) {
			var first time.Duration
			for b.Loop() {
				start := time.Now()
				resp, err := c.Post(t.url, "application/json", strings.NewReader(`{"stream":true}`))
				if err != nil {
					b.Fatal(err)
				}
				r := bufio.NewReader(resp.Body)
				if _, err := r.ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				first += time.Since(start)
				io.Copy(io.Discard, r)
				resp.Body.Close()
			}
			b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "ns/first-byte")
		})
	}
}
