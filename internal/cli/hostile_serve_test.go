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

// TestHostileServeProbes runs the hostile-client and hostile-upstream
// probes of docs/limits.md against a real abctl serve process on
// 127.0.0.1 and prints a table: probe, bound, measured. It is long, so it
// runs only with ABKIT_HOSTILE=1 (make test-hostile); the bounds
// themselves have fast tests in internal/netlimit, internal/pipeline and
// internal/replay/live.
func TestHostileServeProbes(t *testing.T) {
	if os.Getenv("ABKIT_HOSTILE") == "" {
		t.Skip("set ABKIT_HOSTILE=1 (make test-hostile) to run the serve probes")
	}
	up := hostileUpstream()
	defer up.Close()
	dir := t.TempDir()
	chain := filepath.Join(dir, "chain.yaml")
	if err := os.WriteFile(chain, []byte("outbound:\n  - name: audit-log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &hostile{t: t, chain: chain, upstream: up.URL,
		hc: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	h.idleConnections()
	h.slowBodies()
	h.silentSubscribers()
	h.hugeAndBrokenBodies()
	var b strings.Builder
	fmt.Fprintf(&b, "| probe | bound | measured |\n|---|---|---|\n")
	for _, r := range h.rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.probe, r.bound, r.measured)
	}
	fmt.Print(b.String())
}

// hostileUpstream serves what the hostile-upstream probes need: 1 GiB of
// JSON, an SSE data line that never ends, a stream that breaks, a short
// stream, and JSON.
func hostileUpstream() *httptest.Server {
	chunk := bytes.Repeat([]byte("x"), 256<<10)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/v1/big": // 1 GiB of JSON
			w.Header().Set("Content-Type", "application/json")
			for range 4096 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/v1/endless": // an SSE data line that never ends
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

// hostile runs the probes against abctl serve processes and collects the
// table's rows.
type hostile struct {
	t               *testing.T
	chain, upstream string
	hc              *http.Client
	rows            []hostileRow
}

type hostileRow struct{ probe, bound, measured string }

func (h *hostile) add(p, b, m string) {
	h.rows = append(h.rows, hostileRow{p, b, m})
	h.t.Logf("%s | %s | %s", p, b, m)
}

// start starts abctl serve with the extra flags and returns its URL, its
// pid and the stop that ends it.
func (h *hostile) start(extra ...string) (string, int, func()) {
	t := h.t
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--chain", h.chain, "--upstream", h.upstream, "--listen", "127.0.0.1:0", "--plugin-dir", binDir}, extra...)...)
	cmd.Env = append(os.Environ(), abctlEnv+"=1")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }
	re := regexp.MustCompile(`on (http://\S+) -> `)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], cmd.Process.Pid, stop
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("serve did not start: %s", stderr.String())
		}
	}
}

// status is a value of /proc/PID/status in kB, -1 when it is missing.
func (h *hostile) status(pid int, key string) int {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, key+":") {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return -1
}

func (h *hostile) fds(pid int) int {
	es, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(es)
}

// streamP99 fetches n short streams from 8 clients and returns the 99th
// percentile of their durations.
func (h *hostile) streamP99(base string, n int) time.Duration {
	var mu sync.Mutex
	var ds []time.Duration
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / 8 {
				t0 := time.Now()
				resp, err := h.hc.Get(base + "/v1/stream")
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				ds = append(ds, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)*99/100]
}

// idleConnections: idle keep-alive connections past --max-conns.
func (h *hostile) idleConnections() {
	base, pid, stop := h.start("--max-conns", "500", "--idle-timeout", "2s")
	addr := strings.TrimPrefix(base, "http://")
	var conns []net.Conn
	busy := 0
	for range 2000 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, "GET /v1/json HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			if resp.StatusCode == 503 {
				busy++
			}
		}
	}
	peakFD := h.fds(pid)
	for _, c := range conns {
		c.Close()
	}
	h.add("2,000 idle keep-alive connections", "--max-conns 500, --idle-timeout 2s", fmt.Sprintf("%d answered 503; serve held %d fds; VmHWM %d MiB", busy, peakFD, h.status(pid, "VmHWM")>>10))
	stop()
}

// slowBodies: clients that send their bodies slowly.
func (h *hostile) slowBodies() {
	base, pid, stop := h.start("--read-body-timeout", "1s")
	addr := strings.TrimPrefix(base, "http://")
	var wg sync.WaitGroup
	closed := 0
	var mu sync.Mutex
	t0 := time.Now()
	for range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(60 * time.Second))
			io.WriteString(c, "POST /v1/json HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123")
			if _, err := io.Copy(io.Discard, c); err == nil {
				mu.Lock()
				closed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	h.add("300 slow-body clients", "--read-body-timeout 1s", fmt.Sprintf("%d of 300 closed by serve, all within %s; VmHWM %d MiB", closed, time.Since(t0).Round(100*time.Millisecond), h.status(pid, "VmHWM")>>10))
	stop()
}

// silentSubscribers: event subscribers that never read, beside traffic.
func (h *hostile) silentSubscribers() {
	base, pid, stop := h.start()
	quiet := h.streamP99(base, 400)
	addr := strings.TrimPrefix(base, "http://")
	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			h.t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /_abkit/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	reader, err := h.hc.Get(base + "/_abkit/v1/events")
	if err != nil {
		h.t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(reader.Body)
		got <- string(data)
	}()
	loaded := h.streamP99(base, 2000)
	rss := h.status(pid, "VmHWM")
	reader.Body.Close()
	out := <-got
	h.add("20 subscribers that never read + 1 that reads, 2,000 streams of 20 frames", "event log 65,536 events / 32 MiB; --event-write-timeout 10s",
		fmt.Sprintf("stream p99 %s quiet, %s with them; reader overflowed: %v; VmHWM %d MiB", quiet.Round(time.Millisecond), loaded.Round(time.Millisecond), strings.Contains(out, "event: overflow"), rss>>10))
	stop()
}

// hugeAndBrokenBodies: a 1 GiB JSON body, an endless SSE line and an
// upstream that breaks mid-stream.
func (h *hostile) hugeAndBrokenBodies() {
	base, pid, stop := h.start()
	resp, err := h.hc.Get(base + "/v1/big")
	if err != nil {
		h.t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h.add("1 GiB JSON body (no plugin reads bodies)", "relayed as it arrives; kept: --body-cap", fmt.Sprintf("%d MiB relayed; VmHWM %d MiB", n>>20, h.status(pid, "VmHWM")>>10))
	stop()
	base, pid, stop = h.start()
	resp, err = h.hc.Get(base + "/v1/endless")
	if err != nil {
		h.t.Fatal(err)
	}
	n, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h.add("endless SSE data line", "one SSE event <= ABKIT_MAX_BODY (32 MiB)", fmt.Sprintf("cut after %d MiB relayed, client error %v; VmHWM %d MiB", n>>20, err != nil, h.status(pid, "VmHWM")>>10))
	resp, err = h.hc.Get(base + "/v1/break")
	if err != nil {
		h.t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h.add("upstream breaks mid-stream", "the client sees a broken stream", fmt.Sprintf("client read error: %v", err))
	stop()
}
