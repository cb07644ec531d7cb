package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hostileScale sizes the serve probes: the long run of make test-hostile
// (the figures) or the short one every go test runs.
type hostileScale struct {
	idleConns, maxConns int    // keep-alive connections opened, --max-conns
	slowClients         int    // clients that send 4 bytes of a 1000-byte body
	quiet, loaded       int    // streams of 20 frames, without and beside stalled subscribers
	stalled             int    // event subscribers that never read
	bigChunks           int    // 256 KiB chunks of the large JSON body
	maxBody             string // ABKIT_MAX_BODY for serve ("" = the default, 32 MiB): where the endless SSE line is cut
	shared              bool   // one serve process for every probe after the first (its figures then add up)
}

var (
	hostileLong  = hostileScale{idleConns: 2000, maxConns: 500, slowClients: 300, quiet: 400, loaded: 2000, stalled: 20, bigChunks: 4096}
	hostileShort = hostileScale{idleConns: 80, maxConns: 32, slowClients: 20, quiet: 16, loaded: 40, stalled: 4, bigChunks: 64, maxBody: "2MiB", shared: true}
)

// TestHostileServeProbes runs the hostile-client and hostile-upstream
// probes of docs/limits.md against a real abctl serve process on
// 127.0.0.1 at the sizes and prints a table: probe, bound,
// measured. It is long, so it runs only with ABKIT_HOSTILE=1 (make
// test-hostile); TestHostileServeProbesShort runs the same probes small in
// every go test, and the bounds themselves have fast tests in
// internal/netlimit, internal/pipeline and internal/replay/live.
func TestHostileServeProbes(t *testing.T) {
	if os.Getenv("ABKIT_HOSTILE") == "" {
		t.Skip("set ABKIT_HOSTILE=1 (make test-hostile) to run the serve probes")
	}
	printRows(serveProbes(t, hostileLong))
}

// TestHostileServeProbesShort runs the serve probes small (a few seconds
// on two cores) and checks what they must show whatever the machine's
// speed: no more connections served than --max-conns, the others refused
// (503, or reset before it is read), every slow body cut by
// serve, every stream served beside stalled subscribers, a large body
// relayed whole, an endless SSE line and an upstream that breaks reaching
// the client as a broken stream. Only hang guards bound it; nothing is
// timed.
func TestHostileServeProbesShort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	skipNoProcs(t)
	rows := serveProbes(t, hostileShort)
	for _, r := range rows {
		if r.fail != "" {
			t.Errorf("%s: %s (measured: %s)", r.probe, r.fail, r.measured)
		}
	}
}

type probeRow struct{ probe, bound, measured, fail string }

func printRows(rows []probeRow) {
	var b strings.Builder
	fmt.Fprintf(&b, "| probe | bound | measured |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.probe, r.bound, r.measured)
	}
	fmt.Print(b.String())
}

// hostileServe is one abctl serve process under probe.
type hostileServe struct {
	base string
	pid  int
	stop func()
}

// status reads a field of the process's /proc status, in kB.
func (s hostileServe) status(key string) int {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, key+":") {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return -1
}

func (s hostileServe) hwm() string { return fmt.Sprintf("VmHWM %d MiB", s.status("VmHWM")>>10) }

func (s hostileServe) addr() string { return strings.TrimPrefix(s.base, "http://") }

// hostileUpstream answers the probes' paths: a large JSON body, an SSE
// data line that never ends, a stream that breaks, a short stream.
func hostileUpstream(sc hostileScale) *httptest.Server {
	chunk := bytes.Repeat([]byte("x"), 256<<10)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/v1/big":
			w.Header().Set("Content-Type", "application/json")
			for range sc.bigChunks {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/v1/endless":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: ")
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/v1/break":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"n\":1}\n\ndata: {\"cut")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case "/v1/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 20 {
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"part %d\"}}]}\n\n", i)
				w.(http.Flusher).Flush()
			}
		default:
			io.WriteString(w, `{"ok":true}`)
		}
	}))
}

// serveProbes runs every probe at scale sc and returns the table's rows,
// each with what went wrong, if anything did.
func serveProbes(t *testing.T, sc hostileScale) []probeRow {
	up := hostileUpstream(sc)
	defer up.Close()
	chain := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(chain, []byte("outbound:\n  - name: audit-log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(extra ...string) hostileServe {
		cmd := exec.Command(os.Args[0], append([]string{"serve", "--chain", chain, "--upstream", up.URL, "--listen", "127.0.0.1:0", "--plugin-dir", binDir}, extra...)...)
		cmd.Env = append(os.Environ(), abctlEnv+"=1")
		if sc.maxBody != "" {
			cmd.Env = append(cmd.Env, "ABKIT_MAX_BODY="+sc.maxBody)
		}
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stop := func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }
		re := regexp.MustCompile(`on (http://\S+) -> `)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) { // hang guard
			if m := re.FindStringSubmatch(stderr.String()); m != nil {
				return hostileServe{base: m[1], pid: cmd.Process.Pid, stop: stop}
			}
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("serve did not start: %s", stderr.String())
			}
		}
	}
	hc := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}} // a hang guard
	defer hc.CloseIdleConnections()
	var rows []probeRow
	add := func(r probeRow) { rows = append(rows, r); t.Logf("%s | %s | %s", r.probe, r.bound, r.measured) }
	add(probeIdleConns(start, sc))
	if sc.shared {
		// One process for the other probes; the slow-body probe's flag is
		// the only one they pass.
		shared := start("--read-body-timeout", "1s")
		defer shared.stop()
		start = func(...string) hostileServe { return hostileServe{base: shared.base, pid: shared.pid, stop: func() {}} }
	}
	add(probeSlowBodies(start, sc))
	add(probeStalledSubscribers(t, start, hc, sc))
	for _, r := range probeUpstreamBodies(t, start, hc, sc) {
		add(r)
	}
	return rows
}

// probeIdleConns holds sc.idleConns keep-alive connections open, each
// after one request: past --max-conns they are answered 503.
func probeIdleConns(start func(...string) hostileServe, sc hostileScale) probeRow {
	s := start("--max-conns", strconv.Itoa(sc.maxConns), "--idle-timeout", "2s")
	defer s.stop()
	var conns []net.Conn
	busy, served, cut := 0, 0, 0 // answered 503, answered 200, reset before an answer was read
	for range sc.idleConns {
		c, err := net.Dial("tcp", s.addr())
		if err != nil {
			break
		}
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(30 * time.Second)) // hang guard
		io.WriteString(c, "GET /v1/json HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		switch {
		case err != nil:
			cut++ // serve closed at once with the request unread: the kernel may reset before the 503 is read
		case resp.StatusCode == http.StatusServiceUnavailable:
			busy++
		case resp.StatusCode == http.StatusOK:
			served++
		}
		if err == nil {
			io.Copy(io.Discard, resp.Body)
		}
	}
	peakFD := len(mustReadDir(fmt.Sprintf("/proc/%d/fd", s.pid)))
	for _, c := range conns {
		c.Close()
	}
	r := probeRow{probe: fmt.Sprintf("%d idle keep-alive connections", sc.idleConns), bound: fmt.Sprintf("--max-conns %d, --idle-timeout 2s", sc.maxConns),
		measured: fmt.Sprintf("%d served, %d answered 503, %d reset; serve held %d fds; %s", served, busy, cut, peakFD, s.hwm())}
	if served > sc.maxConns || served == 0 || busy == 0 {
		r.fail = fmt.Sprintf("%d connections served at once, %d answered 503: want 1 to %d served (--max-conns), the others refused", served, busy, sc.maxConns)
	}
	return r
}

func mustReadDir(dir string) []os.DirEntry { es, _ := os.ReadDir(dir); return es }

// probeSlowBodies starts sc.slowClients requests whose body never
// arrives: serve closes every one (--read-body-timeout).
func probeSlowBodies(start func(...string) hostileServe, sc hostileScale) probeRow {
	s := start("--read-body-timeout", "1s")
	defer s.stop()
	var wg sync.WaitGroup
	var mu sync.Mutex
	closed := 0
	for range sc.slowClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", s.addr())
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(60 * time.Second)) // hang guard: past it the copy fails
			io.WriteString(c, "POST /v1/json HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123")
			if _, err := io.Copy(io.Discard, c); err == nil {
				mu.Lock()
				closed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r := probeRow{probe: fmt.Sprintf("%d slow-body clients", sc.slowClients), bound: "--read-body-timeout 1s",
		measured: fmt.Sprintf("%d of %d closed by serve; %s", closed, sc.slowClients, s.hwm())}
	if closed != sc.slowClients {
		r.fail = fmt.Sprintf("serve closed %d of %d", closed, sc.slowClients)
	}
	return r
}

// streams runs n streams of 20 frames, 8 at a time, and returns how many
// were read whole and their p99.
func streams(hc *http.Client, base string, n int) (int, time.Duration) {
	var mu sync.Mutex
	var ds []time.Duration
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / 8 {
				t0 := time.Now()
				resp, err := hc.Get(base + "/v1/stream")
				if err != nil {
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || !bytes.Contains(body, []byte("part 19")) {
					continue
				}
				mu.Lock()
				ds = append(ds, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	if len(ds) == 0 {
		return 0, 0
	}
	return len(ds), ds[len(ds)*99/100]
}

// probeStalledSubscribers opens sc.stalled event subscribers that never
// read and one that does, beside traffic: every stream is still served.
func probeStalledSubscribers(t *testing.T, start func(...string) hostileServe, hc *http.Client, sc hostileScale) probeRow {
	s := start()
	defer s.stop()
	_, quiet := streams(hc, s.base, sc.quiet)
	for range sc.stalled {
		c, err := net.Dial("tcp", s.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /_abkit/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	reader, err := hc.Get(s.base + "/_abkit/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(reader.Body)
		got <- string(data)
	}()
	want := sc.loaded / 8 * 8
	ok, loaded := streams(hc, s.base, sc.loaded)
	rss := s.hwm()
	reader.Body.Close()
	out := <-got
	r := probeRow{probe: fmt.Sprintf("%d subscribers that never read + 1 that reads, %d streams of 20 frames", sc.stalled, sc.loaded),
		bound: "event log 65,536 events / 32 MiB; --event-write-timeout 10s",
		measured: fmt.Sprintf("%d of %d streams whole; stream p99 %s quiet, %s with them; reader overflowed: %v; %s",
			ok, want, quiet.Round(time.Millisecond), loaded.Round(time.Millisecond), strings.Contains(out, "event: overflow"), rss)}
	if ok != want {
		r.fail = fmt.Sprintf("%d of %d streams read whole beside the stalled subscribers", ok, want)
	}
	return r
}

// probeUpstreamBodies relays a large JSON body, an endless SSE data line
// and a stream the upstream breaks.
func probeUpstreamBodies(t *testing.T, start func(...string) hostileServe, hc *http.Client, sc hostileScale) []probeRow {
	get := func(base, path string) (int64, error) {
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return io.Copy(io.Discard, resp.Body)
	}
	s := start()
	n, err := get(s.base, "/v1/big")
	big := probeRow{probe: fmt.Sprintf("%d MiB JSON body (no plugin reads bodies)", sc.bigChunks/4), bound: "relayed as it arrives; kept: --body-cap",
		measured: fmt.Sprintf("%d MiB relayed; %s", n>>20, s.hwm())}
	if want := int64(sc.bigChunks) << 18; n != want || err != nil {
		big.fail = fmt.Sprintf("%d of %d bytes relayed (%v)", n, want, err)
	}
	s.stop()
	s = start()
	defer s.stop()
	bound := "one SSE event <= ABKIT_MAX_BODY (32 MiB)"
	if sc.maxBody != "" {
		bound = "one SSE event <= ABKIT_MAX_BODY=" + sc.maxBody
	}
	n, err = get(s.base, "/v1/endless")
	endless := probeRow{probe: "endless SSE data line", bound: bound, measured: fmt.Sprintf("cut after %d MiB relayed, client error %v; %s", n>>20, err != nil, s.hwm())}
	if err == nil {
		endless.fail = "the client saw a clean end"
	}
	_, err = get(s.base, "/v1/break")
	broken := probeRow{probe: "upstream breaks mid-stream", bound: "the client sees a broken stream", measured: fmt.Sprintf("client read error: %v", err)}
	if err == nil {
		broken.fail = "the client saw a clean end"
	}
	return []probeRow{big, endless, broken}
}
