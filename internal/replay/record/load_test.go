package record

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/replay/fixture"
)

// The load harness: real HTTP on 127.0.0.1 (an upstream, the recording
// proxy as abctl record serves it, clients with their own connections).
// Every exchange carries a unique id and a unique secret in its
// Authorization header, its query and its JSON body; the upstream echoes
// the secret back in the response. Afterwards every fixture is read back:
// each id must be in exactly one fixture (none lost, none duplicated) and
// no secret may be anywhere in the output directory.

// loadUpstream serves /v1/chat (JSON, the secret echoed) and /v1/stream
// (an event stream whose first event is sent at once, then four more),
// /v1/chat-20ms (JSON after 20 ms) and /v1/stream-20ms (the first event
// after 20 ms, then four 5 ms apart).
func loadUpstream(tb testing.TB) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"echo":%s,"choices":[{"message":{"role":"assistant","content":"ok"}}]}`, r.Header.Get("X-Load-Id"), body)
	})
	// A service time as a fast JSON API has it: the exchange is not all
	// CPU, so the recorder's share shows as it would in use.
	mux.HandleFunc("/v1/chat-20ms", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"echo":%s,"choices":[{"message":{"role":"assistant","content":"ok"}}]}`, r.Header.Get("X-Load-Id"), body)
	})
	mux.HandleFunc("/v1/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i := range 5 {
			fmt.Fprintf(w, "data: {\"id\":%q,\"n\":%d}\n\n", r.Header.Get("X-Load-Id"), i)
			fl.Flush()
		}
	})
	// A stream as a model sends it: the first event after 20 ms, the
	// others 5 ms apart.
	mux.HandleFunc("/v1/stream-20ms", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		time.Sleep(20 * time.Millisecond)
		for i := range 5 {
			if i > 0 {
				time.Sleep(5 * time.Millisecond)
			}
			fmt.Fprintf(w, "data: {\"id\":%q,\"n\":%d}\n\n", r.Header.Get("X-Load-Id"), i)
			fl.Flush()
		}
	})
	return serveLoopback(tb, mux)
}

func serveLoopback(tb testing.TB, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// loadClient is one of the concurrent clients: its own connection pool,
// as separate client processes would have.
func loadClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
}

// exchange sends one request and reads the whole response; it returns the
// time to the end of the response and to its first body byte.
func exchange(c *http.Client, base, path, id string) (total, first time.Duration, err error) {
	secret := "sk-load" + strings.ReplaceAll(id, "-", "x") + "SECRETSECRET"
	body := fmt.Sprintf(`{"model":"m","api_key":%q,"messages":[{"role":"user","content":"hello %s"}]}`, secret, id)
	req, err := http.NewRequest(http.MethodPost, base+path+"?api_key="+secret+"&id="+id, strings.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("X-Load-Id", id)
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.Peek(1); err != nil {
		return 0, 0, fmt.Errorf("%s: first byte: %w", id, err)
	}
	first = time.Since(t0)
	rest, err := io.ReadAll(br)
	if err != nil {
		return 0, 0, err
	}
	total = time.Since(t0)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(rest, []byte(id)) {
		return 0, 0, fmt.Errorf("%s: status %d, body %.200q", id, resp.StatusCode, rest)
	}
	return total, first, nil
}

// loadResult is what one load run measured.
type loadResult struct {
	total, first []time.Duration // per exchange
	wall         time.Duration
}

// runLoad has clients clients send n exchanges each to base+path, all at
// once; ids are PREFIX-CLIENT-SEQ.
func runLoad(tb testing.TB, base, path, prefix string, clients, n int) loadResult {
	var mu sync.Mutex
	var res loadResult
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := loadClient()
			defer hc.CloseIdleConnections()
			total := make([]time.Duration, 0, n)
			first := make([]time.Duration, 0, n)
			for i := range n {
				t, f, err := exchange(hc, base, path, fmt.Sprintf("%s-%d-%d", prefix, c, i))
				if err != nil {
					if failed.Add(1) <= 5 {
						tb.Error(err)
					}
					continue
				}
				total, first = append(total, t), append(first, f)
			}
			mu.Lock()
			res.total = append(res.total, total...)
			res.first = append(res.first, first...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.wall = time.Since(start)
	return res
}

// audit reads every fixture in dir and counts, for the ids
// PREFIX-CLIENT-SEQ sent, how many were not recorded and how many twice or
// more, and how many secrets appear anywhere in the directory.
func audit(tb testing.TB, dir, prefix string, clients, n int) (lost, dup, secrets int) {
	seen := map[string]int{}
	idRe := regexp.MustCompile(`id=([a-z]+-\d+-\d+)`)
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		secrets += bytes.Count(raw, []byte("SECRETSECRET"))
		if strings.HasPrefix(e.Name(), ".") {
			tb.Errorf("temporary file left: %s", e.Name())
			continue
		}
		f, err := fixture.Parse(p, raw)
		if err != nil {
			tb.Errorf("%s: %v", e.Name(), err)
			continue
		}
		for _, s := range [][]byte{f.Request.Body, f.Response.BodyBytes()} {
			secrets += bytes.Count(s, []byte("SECRETSECRET"))
		}
		m := idRe.FindStringSubmatch(f.Request.URL)
		if m == nil {
			tb.Errorf("%s: no id in %s", e.Name(), f.Request.URL)
			continue
		}
		if strings.HasPrefix(m[1], prefix+"-") {
			seen[m[1]]++
		}
	}
	for c := range clients {
		for i := range n {
			switch k := seen[fmt.Sprintf("%s-%d-%d", prefix, c, i)]; {
			case k == 0:
				lost++
			case k > 1:
				dup++
			}
		}
	}
	return lost, dup, secrets
}

// recordingProxy serves a recorder to upstream on loopback, writing into a
// new directory under root (tb.TempDir() when ""); its warnings and errors
// are reported with the test's failure.
func recordingProxy(tb testing.TB, upstream, root string) (*Proxy, string, string) {
	dir := tb.TempDir()
	if root != "" {
		var err error
		if dir, err = os.MkdirTemp(root, "out"); err != nil {
			tb.Fatal(err)
		}
	}
	logs := &lockedBuffer{}
	p, err := New(upstream, dir, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("recorder log:\n%s", logs.String())
		}
	})
	return p, dir, serveLoopback(tb, p)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRecordLoadNothingLost is the load run at CI scale: 10 clients × 30
// exchanges of each kind through one recorder: every exchange is recorded
// exactly once, and no secret reaches the output directory.
func TestRecordLoadNothingLost(t *testing.T) {
	const clients, n = 10, 30
	up := loadUpstream(t)
	p, dir, proxy := recordingProxy(t, up, "")
	runLoad(t, proxy, "/v1/chat", "json", clients, n)
	runLoad(t, proxy, "/v1/stream", "sse", clients, n)
	p.Wait()
	for _, kind := range []string{"json", "sse"} {
		lost, dup, secrets := audit(t, dir, kind, clients, n)
		if lost != 0 || dup != 0 || secrets != 0 {
			t.Errorf("%s: %d lost, %d duplicated, %d secrets in the fixtures", kind, lost, dup, secrets)
		}
	}
	if got := len(p.Written()); got != 2*clients*n {
		t.Errorf("proxy says %d recorded, want %d", got, 2*clients*n)
	}
}

// BenchmarkRecordLoad: 50 clients at once, b.N exchanges each, directly to
// the upstream, through a bare reverse proxy (the floor of a second hop)
// and through the recorder; JSON (answered at once, and
// after 20 ms) and event streams (sent at once, and as a model sends
// them). It
// reports the median and 99th percentile of the exchange time (JSON) and
// of the time to the first body byte (SSE), and for the recorded runs the
// lost, duplicated and leaked counts. The load is
// -benchtime 1000x (50 × 1,000 exchanges per sub-benchmark); see
// docs/perf.md.
//
// The fixtures stay until the whole benchmark is done: on ext4 without a
// journal (the development machine's), a new inode skips every inode of
// its group freed in the last minute or more, so deleting one row's 50,000
// fixtures made the next row's file creation several times dearer.
func BenchmarkRecordLoad(b *testing.B) {
	const clients = 50
	up := loadUpstream(b)
	root := b.TempDir()
	for _, kind := range []struct{ name, path string }{{"json", "/v1/chat"}, {"jsonslow", "/v1/chat-20ms"}, {"sse", "/v1/stream"}, {"sseslow", "/v1/stream-20ms"}} {
		for _, via := range []string{"direct", "proxy", "record"} {
			b.Run(kind.name+"/"+via, func(b *testing.B) {
				base, p, dir := up, (*Proxy)(nil), ""
				switch via {
				case "record":
					p, dir, base = recordingProxy(b, up, root)
				case "proxy":
					base = bareProxy(b, up)
				}
				runLoad(b, base, kind.path, "warm", clients, 2)
				if p != nil {
					p.Wait()
				}
				b.ResetTimer()
				cpu0 := cpuTime()
				res := runLoad(b, base, kind.path, kind.name, clients, b.N)
				if p != nil {
					p.Wait() // the fixtures' CPU counts too
				}
				cpu := cpuTime() - cpu0
				b.StopTimer()
				b.ReportMetric(float64(cpu.Microseconds())/float64(clients*b.N), "cpu-us/exch")
				lat := res.total
				if strings.HasPrefix(kind.name, "sse") {
					lat = res.first
				}
				slices.Sort(lat)
				q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))]) / 1e6 }
				b.ReportMetric(q(0.5), "p50-ms")
				b.ReportMetric(q(0.99), "p99-ms")
				b.ReportMetric(float64(len(lat))/res.wall.Seconds(), "exch/s")
				if p == nil {
					return
				}
				lost, dup, secrets := audit(b, dir, kind.name, clients, b.N)
				b.ReportMetric(float64(lost), "lost")
				b.ReportMetric(float64(dup), "dup")
				b.ReportMetric(float64(secrets), "secrets")
				if lost+dup+secrets != 0 {
					b.Errorf("%d lost, %d duplicated, %d secrets", lost, dup, secrets)
				}
			})
		}
	}
}

// bareProxy serves a net/http reverse proxy to up that records nothing:
// the floor of any recorder built on net/http (a second loopback hop, a
// server and a client more), against which the recorder's own cost shows.
func bareProxy(tb testing.TB, up string) string {
	u, err := url.Parse(up)
	if err != nil {
		tb.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // every write flushed, as the recorder relays
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}
	return serveLoopback(tb, rp)
}

// cpuTime is the CPU this process used so far, user and system: the
// harness runs clients, proxy and upstream in one process, so the
// difference between the direct and recorded runs is the recorder's.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
