package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/replay/fixture"
)

// The load harness: real HTTP on 127.0.0.1 (an upstream, serve, clients
// with their own connections). Every exchange carries a unique load id in
// its path and a unique credential in its Authorization header, its query
// and its JSON body; the upstream echoes both back. Afterwards serve's
// counters, the ring (through the API) and, with --record, every fixture
// are checked: each id finished once (none lost, none duplicated), the
// ring holds at most its size, and no credential is served or written.

// loadUpstream serves /v1/chat/ID (JSON, the body echoed) and
// /v1/stream/ID (an event stream of five events, each flushed).
func loadUpstream(tb testing.TB) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/{id}", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"echo":%s,"choices":[{"message":{"role":"assistant","content":"ok"}}]}`, r.PathValue("id"), body)
	})
	mux.HandleFunc("/v1/stream/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i := range 5 {
			fmt.Fprintf(w, "data: {\"id\":%q,\"n\":%d}\n\n", r.PathValue("id"), i)
			fl.Flush()
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// loadSecret is the credential of exchange id; loadMark is in every one.
const loadMark = "LOADSECRET"

func loadSecret(id string) string {
	return "sk-load" + strings.ReplaceAll(id, "-", "x") + loadMark
}

// loadExchange sends exchange id (JSON when i is even, a stream when odd)
// and checks the whole answer came back; it returns the time to the end
// of the answer.
func loadExchange(c *http.Client, base, id string, i int) (time.Duration, error) {
	kind, want := "chat", `"content":"ok"`
	if i%2 == 1 {
		kind, want = "stream", `"n":4}`
	}
	secret := loadSecret(id)
	body := fmt.Sprintf(`{"model":"m","api_key":%q,"messages":[{"role":"user","content":"hello %s"}]}`, secret, id)
	req, err := http.NewRequest(http.MethodPost, base+"/v1/"+kind+"/"+id+"?api_key="+secret, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", id, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", id, err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(got, []byte(`"`+id+`"`)) || !bytes.Contains(got, []byte(want)) {
		return 0, fmt.Errorf("%s: status %d, body %.200q", id, resp.StatusCode, got)
	}
	return time.Since(t0), nil
}

// runLoad has clients clients, each with its own connections, send n
// exchanges each to base, all at once; ids are PREFIX-CLIENT-SEQ with SEQ
// from first. It returns each exchange's time and the wall time; a failed
// exchange is reported on tb.
func runLoad(tb testing.TB, base, prefix string, clients, first, n int) ([]time.Duration, time.Duration) {
	var mu sync.Mutex
	var all []time.Duration
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			hc := &http.Client{Timeout: hangGuard, Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
			defer hc.CloseIdleConnections()
			mine := make([]time.Duration, 0, n)
			for i := first; i < first+n; i++ {
				d, err := loadExchange(hc, base, fmt.Sprintf("%s-%d-%d", prefix, c, i), i)
				if err != nil {
					if failed.Add(1) <= 5 {
						tb.Error(err)
					}
					continue
				}
				mine = append(mine, d)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return all, time.Since(start)
}

// loadAudit is what the checks after a load run found.
type loadAudit struct {
	served, listed, ring int
	// lost and dup count the load ids (PREFIX-CLIENT-SEQ) that were not
	// recorded or recorded more than once; -1 without a record directory.
	lost, dup int
	// badIDs counts exchange ids listed twice or outside 1..served, and
	// listed exchanges that did not end allow/200.
	badIDs int
	// secrets counts credentials found in what the API served (every
	// listed exchange's detail) and in the fixtures.
	secrets int
}

var loadIDRe = regexp.MustCompile(`/v1/(?:chat|stream)/([a-z]+-\d+-\d+)\b`)

// audit checks serve after a run of want exchanges: the list and every
// detail through the API, and every fixture in dir (when dir is set) for
// the ids PREFIX-CLIENT-SEQ sent.
func audit(tb testing.TB, s *Server, base, dir, prefix string, clients, n int) loadAudit {
	var a loadAudit
	a.served = int(s.Stats().Served)
	var list exchangeList
	if err := getJSON(base+PathExchanges, &list); err != nil {
		tb.Fatal(err)
	}
	a.listed, a.ring = len(list.Exchanges), list.Ring
	ids := map[uint64]bool{}
	for _, e := range list.Exchanges {
		if ids[e.ID] || e.ID < 1 || e.ID > uint64(a.served) || e.Outcome != "allow" || e.Status != http.StatusOK {
			a.badIDs++
		}
		ids[e.ID] = true
		resp, err := http.Get(fmt.Sprintf("%s%s/%d", base, PathExchanges, e.ID))
		if err != nil {
			tb.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		a.secrets += bytes.Count(body, []byte(loadMark))
	}
	a.lost, a.dup = -1, -1
	if dir == "" {
		return a
	}
	seen := map[string]int{}
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
		a.secrets += bytes.Count(raw, []byte(loadMark))
		if strings.HasPrefix(e.Name(), ".") {
			tb.Errorf("temporary file left: %s", e.Name())
			continue
		}
		f, err := fixture.Parse(p, raw)
		if err != nil {
			tb.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if m := loadIDRe.FindStringSubmatch(f.Request.URL); m != nil && strings.HasPrefix(m[1], prefix+"-") {
			seen[m[1]]++
		}
	}
	a.lost, a.dup = 0, 0
	for c := range clients {
		for i := range n {
			switch k := seen[fmt.Sprintf("%s-%d-%d", prefix, c, i)]; {
			case k == 0:
				a.lost++
			case k > 1:
				a.dup++
			}
		}
	}
	return a
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// TestServeLoadNothingLost is the load run at CI scale: 10 clients × 30
// exchanges (JSON and streams) at once through serve with --record and a
// ring of 100: every exchange is answered whole, counted once and
// recorded exactly once, the ring holds its size and no more, and no
// credential reaches the API or the fixtures.
func TestServeLoadNothingLost(t *testing.T) {
	const clients, n, ringSize = 10, 30, 100
	up := loadUpstream(t)
	dir := t.TempDir()
	s := startServe(t, up, testChain, Options{Ring: ringSize, RecordDir: dir}, hangGuard)
	runLoad(t, s.base, "load", clients, 0, n)
	s.Wait()
	a := audit(t, s.Server, s.base, dir, "load", clients, n)
	if a.served != clients*n || a.lost != 0 || a.dup != 0 || a.badIDs != 0 || a.secrets != 0 {
		t.Errorf("served %d of %d; %d lost, %d duplicated, %d bad ids in the ring, %d credentials served or written", a.served, clients*n, a.lost, a.dup, a.badIDs, a.secrets)
	}
	if a.ring != ringSize || a.listed != ringSize {
		t.Errorf("the ring lists %d exchanges, size %d; want %d", a.listed, a.ring, ringSize)
	}
	if st := s.Stats(); st.Recorded != clients*n || len(fixturesIn(t, dir)) != clients*n {
		t.Errorf("stats %+v, %d files; want %d recorded", st, len(fixturesIn(t, dir)), clients*n)
	}
}

// memNow returns the live heap after a collection, and the process's
// resident set (VmRSS), in MiB.
func memNow() (heap, rss float64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap = float64(ms.HeapAlloc) / (1 << 20)
	if f, err := os.Open("/proc/self/status"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				rss = float64(kb) / 1024
			}
		}
		f.Close()
	}
	return heap, rss
}

// BenchmarkServeLoad: 50 clients at once, b.N exchanges each (JSON and
// streams alternating), through serve with the 6-plugin pass-through
// chain and the default ring (500), without and with --record. The ring
// is filled first (1,000 exchanges); the heap (live, after a collection)
// and RSS are measured then, half-way (before the fixtures still queued
// are written) and at the end, so "memory flat once the ring is full" is
// the difference. With --record, names-MiB is the list of fixture files
// written, which serve keeps to print when it stops (it grows by one name
// per fixture). It reports exchanges/s, CPU per exchange, p50/p99, and
// the unserved, leaked, and (with --record, where each id's fixture is
// counted) lost and duplicated counts. The load is
// -benchtime 1000x (50 × 1,000 exchanges); see docs/perf.md.
func BenchmarkServeLoad(b *testing.B) {
	const clients = 50
	up := loadUpstream(b)
	for _, mode := range []string{"ring", "record"} {
		b.Run(mode, func(b *testing.B) {
			opts := Options{}
			if mode == "record" {
				opts.RecordDir = b.TempDir()
			}
			s, base := passServe(b, up, opts)
			warm := 2 * DefaultRing / clients
			runLoad(b, base, "warm", clients, 0, warm)
			s.Wait()
			heapFull, rssFull := memNow()
			half := b.N / 2
			b.ResetTimer()
			cpu0 := cpuTime()
			lat, wall := runLoad(b, base, "load", clients, 0, half)
			b.StopTimer()
			// Fixtures still queued to be written show as goroutines.
			goMid := runtime.NumGoroutine()
			heapMid, rssMid := memNow()
			b.StartTimer()
			lat2, wall2 := runLoad(b, base, "load", clients, half, b.N-half)
			s.Wait() // the fixtures' CPU counts too
			cpu := cpuTime() - cpu0
			b.StopTimer()
			heapEnd, rssEnd := memNow()
			lat, wall = append(lat, lat2...), wall+wall2
			slices.Sort(lat)
			q := func(f float64) float64 {
				if len(lat) == 0 {
					return 0
				}
				return float64(lat[int(f*float64(len(lat)-1))]) / 1e6
			}
			b.ReportMetric(float64(len(lat))/wall.Seconds(), "exch/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(clients*b.N), "cpu-us/exch")
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
			b.ReportMetric(heapFull, "heap-MiB-full")
			b.ReportMetric(heapMid, "heap-MiB-mid")
			b.ReportMetric(heapEnd, "heap-MiB-end")
			b.ReportMetric(rssFull, "rss-MiB-full")
			b.ReportMetric(rssMid, "rss-MiB-mid")
			b.ReportMetric(rssEnd, "rss-MiB-end")
			b.ReportMetric(float64(goMid), "goroutines-mid")
			a := audit(b, s, base, opts.RecordDir, "load", clients, b.N)
			want := clients * (b.N + warm)
			b.ReportMetric(float64(want-a.served), "unserved")
			b.ReportMetric(float64(a.listed), "listed")
			b.ReportMetric(float64(a.secrets), "secrets")
			if opts.RecordDir != "" {
				b.ReportMetric(float64(a.lost), "lost")
				b.ReportMetric(float64(a.dup), "dup")
			}
			if a.served != want || a.listed > a.ring || a.badIDs != 0 || a.secrets != 0 || a.lost > 0 || a.dup > 0 {
				b.Errorf("%+v; want %d served", a, want)
			}
		})
	}
}

// fixturesIn lists the fixture files in dir.
func fixturesIn(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+fixture.Ext))
	if err != nil {
		t.Fatal(err)
	}
	return files
}
