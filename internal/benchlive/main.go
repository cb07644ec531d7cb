// Command benchlive is `make bench-live`: it runs abctl serve (a
// one-plugin chain, and inference-parser + guardrail), abctl record and a
// bare Go httputil.ReverseProxy side by side, each in its own process on
// 127.0.0.1 in front of the same upstream (another process), loads each
// in turn with SSE and JSON exchanges, and prints requests/s, CPU per
// exchange of the proxy's process and latency, with the ratios to the
// bare proxy measured in the same round. Every answer is checked whole;
// an answer that serve or record cut or lost fails the run. It is
// bounded: rounds × kinds × 4 proxies × -duration of load.
//
//	go build -o bin/ ./cmd/abctl && go run ./internal/benchlive -abctl bin/abctl
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sseEvents is how many events an SSE answer carries.
const sseEvents = 200

func main() {
	role := flag.String("role", "", "internal: upstream or bareproxy (the processes benchlive starts)")
	listen := flag.String("listen", "", "internal: address of an upstream or bareproxy role")
	upstream := flag.String("upstream", "", "internal: upstream of the bareproxy role")
	abctl := flag.String("abctl", "bin/abctl", "the abctl binary to measure")
	rounds := flag.Int("rounds", 3, "rounds; each loads every proxy with each kind once, in a rotated order")
	duration := flag.Duration("duration", 2*time.Second, "load per proxy, kind and round")
	conns := flag.Int("conns", 16, "connections at once")
	flag.Parse()
	switch *role {
	case "upstream":
		serveUpstream(*listen)
		return
	case "bareproxy":
		serveBareProxy(*listen, *upstream)
		return
	}
	if err := run(*abctl, *rounds, *duration, *conns); err != nil {
		fmt.Fprintln(os.Stderr, "bench-live:", err)
		os.Exit(1)
	}
}

// sseBody and jsonBody are the upstream's answers.
var sseBody, jsonBody = func() (string, string) {
	var b strings.Builder
	for i := range sseEvents {
		fmt.Fprintf(&b, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token %d of the answer\"}}]}\n\n", i)
	}
	return b.String(), `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"a short answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3}}`
}()

// serveUpstream answers /sse with sseEvents events written without a
// flush between them (net/http cuts them into 4 KiB writes, as a fast
// upstream on loopback does) and anything else with jsonBody.
func serveUpstream(addr string) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/sse") {
			w.Header().Set("Content-Type", "text/event-stream")
			for rest := sseBody; rest != ""; {
				i := strings.Index(rest, "\n\n") + 2
				_, _ = io.WriteString(w, rest[:i])
				rest = rest[i:]
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, jsonBody)
	})
	fatal((&http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}).ListenAndServe())
}

// serveBareProxy is the peer: httputil.ReverseProxy flushing after every
// read of the upstream (FlushInterval -1).
func serveBareProxy(addr, up string) {
	target, err := url.Parse(up)
	fatal(err)
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true},
		FlushInterval: -1,
	}
	fatal((&http.Server{Addr: addr, Handler: rp, ReadHeaderTimeout: 10 * time.Second}).ListenAndServe())
}

func fatal(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// proc is one proxy under test.
type proc struct {
	name string
	url  string
	cmd  *exec.Cmd
	peer bool // the bare proxy: its cut answers are counted, not failed
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// start runs a process that listens on addr and waits until it accepts.
func start(name string, addr string, argv ...string) (*exec.Cmd, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	// Its log (record logs every fixture) goes to a file beside the
	// fixtures, shown when it does not start.
	log, err := os.CreateTemp("", "bench-live-"+name+"-*.log")
	if err != nil {
		return nil, err
	}
	defer os.Remove(log.Name())
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd, nil
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	text, _ := os.ReadFile(log.Name())
	return nil, fmt.Errorf("%s did not listen on %s within 30 s: %s", name, addr, bytes.TrimSpace(text))
}

func run(abctl string, rounds int, duration time.Duration, conns int) error {
	if _, err := os.Stat(abctl); err != nil {
		return fmt.Errorf("%w (build it: go build -o bin/ ./cmd/abctl)", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "bench-live-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var procs []*proc
	var cmds []*exec.Cmd
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	launch := func(name string, argv func(addr string) []string) (string, error) {
		addr, err := freeAddr()
		if err != nil {
			return "", err
		}
		cmd, err := start(name, addr, argv(addr)...)
		if err != nil {
			return "", err
		}
		cmds = append(cmds, cmd)
		return addr, nil
	}
	upAddr, err := launch("upstream", func(a string) []string { return []string{self, "-role", "upstream", "-listen", a} })
	if err != nil {
		return err
	}
	up := "http://" + upAddr
	chains := map[string]string{
		"serve-1plugin": "outbound:\n  - name: audit-log\n",
		"serve-parser+guardrail": "outbound:\n  - name: inference-parser\n  - name: guardrail\n    config:\n" +
			"      phrases: [\"drop table\"]\n      status: 451\n",
	}
	add := func(name string, peer bool, argv func(addr string) []string) error {
		addr, err := launch(name, argv)
		if err != nil {
			return err
		}
		procs = append(procs, &proc{name: name, url: "http://" + addr, cmd: cmds[len(cmds)-1], peer: peer})
		return nil
	}
	if err := add("bareproxy", true, func(a string) []string {
		return []string{self, "-role", "bareproxy", "-listen", a, "-upstream", up}
	}); err != nil {
		return err
	}
	for _, name := range []string{"serve-1plugin", "serve-parser+guardrail"} {
		chain := filepath.Join(tmp, name+".yaml")
		if err := os.WriteFile(chain, []byte(chains[name]), 0o644); err != nil {
			return err
		}
		if err := add(name, false, func(a string) []string {
			return []string{abctl, "serve", "--chain", chain, "--upstream", up, "--listen", a}
		}); err != nil {
			return err
		}
	}
	out := filepath.Join(tmp, "record")
	if err := add("record", false, func(a string) []string {
		return []string{abctl, "record", "--upstream", up, "--listen", a, "--out", out}
	}); err != nil {
		return err
	}

	fmt.Printf("bench-live: %d round(s), %s of load per proxy and kind, %d connections; load average %s\n",
		rounds, duration, conns, loadavg())
	results := map[resultKey][]result{}
	var failed []string
	for r := range rounds {
		for _, kind := range []string{"sse", "json"} {
			order := slices.Clone(procs)
			for range r % len(order) {
				order = append(order[1:], order[0])
			}
			for _, p := range order {
				res, err := load(p, kind, duration, conns)
				if err != nil {
					return err
				}
				results[resultKey{kind, p.name}] = append(results[resultKey{kind, p.name}], res)
				if res.cut > 0 && !p.peer {
					failed = append(failed, fmt.Sprintf("%s %s round %d: %d of %d answers cut, the first: %s", p.name, kind, r+1, res.cut, res.n+res.cut, res.firstCut))
				}
			}
		}
		fmt.Printf("round %d done; load average %s\n", r+1, loadavg())
		printRound(procs, results, r)
	}

	printTable(procs, results)
	fmt.Println("\nmedians over the rounds; × bare: median [min–max] of the per-round ratios to the bare proxy; CPU is the proxy process's user + system time")
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}

// resultKey names the results of one proxy under one kind of load.
type resultKey struct{ kind, name string }

// printTable prints each proxy's medians over the rounds beside its
// ratios to the bare proxy's.
func printTable(procs []*proc, results map[resultKey][]result) {
	fmt.Printf("\n%-6s %-24s %10s %8s %12s %8s %9s %9s %8s %5s\n", "kind", "proxy", "req/s", "× bare", "CPU µs/req", "× bare", "p50 ms", "p99 ms", "× bare", "cut")
	for _, kind := range []string{"sse", "json"} {
		peer := results[resultKey{kind, "bareproxy"}]
		for _, p := range procs {
			rs := results[resultKey{kind, p.name}]
			var rps, cpu, p50, p99, xr, xc, xp []float64
			cut := 0
			for i, x := range rs {
				rps, cpu, p50, p99 = append(rps, x.rps()), append(cpu, x.cpuPerReq()), append(p50, x.p50), append(p99, x.p99)
				xr = append(xr, x.rps()/peer[i].rps())
				xc = append(xc, x.cpuPerReq()/peer[i].cpuPerReq())
				xp = append(xp, x.p99/peer[i].p99)
				cut += x.cut
			}
			fmt.Printf("%-6s %-24s %10.0f %18s %12.0f %18s %9.2f %9.2f %18s %5d\n", kind, p.name, median(rps), spread(xr), median(cpu), spread(xc), median(p50), median(p99), spread(xp), cut)
		}
	}
}

// printRound prints round r of every proxy beside the bare proxy's in
// the same round, so that each figure's spread can be read.
func printRound(procs []*proc, results map[resultKey][]result, r int) {
	for _, kind := range []string{"sse", "json"} {
		peer := results[resultKey{kind, "bareproxy"}][r]
		for _, p := range procs {
			x := results[resultKey{kind, p.name}][r]
			fmt.Printf("  %-4s %-24s %6.0f req/s (%.2f×)  %5.0f µs CPU/req (%.2f×)  p50 %6.2f  p99 %7.2f ms (%.2f×)  cut %d\n", kind, p.name,
				x.rps(), x.rps()/peer.rps(), x.cpuPerReq(), x.cpuPerReq()/peer.cpuPerReq(), x.p50, x.p99, x.p99/peer.p99, x.cut)
		}
	}
}

type result struct {
	n, cut   int
	elapsed  time.Duration
	cpu      time.Duration
	p50, p99 float64 // ms
	firstCut string
}

func (r result) rps() float64       { return float64(r.n) / r.elapsed.Seconds() }
func (r result) cpuPerReq() float64 { return float64(r.cpu.Microseconds()) / float64(max(r.n, 1)) }

// load sends kind exchanges to p from conns connections for d and checks
// every answer whole.
func load(p *proc, kind string, d time.Duration, conns int) (result, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	path, want := "/v1/chat/json", jsonBody
	if kind == "sse" {
		path, want = "/v1/chat/sse", sseBody
	}
	// Warm the connections up.
	for range conns {
		if _, err := exchange(c, p.url+path, want); err != nil && !p.peer {
			return result{}, fmt.Errorf("%s: warm-up: %w", p.name, err)
		}
	}
	var (
		mu       sync.Mutex
		lat      []float64
		cut      atomic.Int64
		firstCut atomic.Value
		wg       sync.WaitGroup
	)
	cpu0, err := cpuOf(p.cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []float64
			for ctx.Err() == nil {
				dt, err := exchange(c, p.url+path, want)
				if err != nil {
					cut.Add(1)
					firstCut.CompareAndSwap(nil, err.Error())
					continue
				}
				mine = append(mine, dt.Seconds()*1000)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	cpu1, err := cpuOf(p.cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	slices.Sort(lat)
	res := result{n: len(lat), cut: int(cut.Load()), elapsed: elapsed, cpu: cpu1 - cpu0}
	if len(lat) > 0 {
		res.p50, res.p99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	}
	if s, ok := firstCut.Load().(string); ok {
		res.firstCut = s
	}
	return res, nil
}

// exchange posts one request and checks the answer is want, byte for byte.
func exchange(c *http.Client, u, want string) (time.Duration, error) {
	t0 := time.Now()
	resp, err := c.Post(u, "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	dt := time.Since(t0)
	switch {
	case err != nil:
		return 0, fmt.Errorf("after %d of %d bytes: %w", len(body), len(want), err)
	case resp.StatusCode != 200:
		return 0, fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
	case string(body) != want:
		return 0, fmt.Errorf("answer differs: %d bytes, want %d", len(body), len(want))
	}
	return dt, nil
}

// cpuOf returns the user + system CPU time of process pid so far
// (/proc/PID/stat, fields 14 and 15, in clock ticks of 1/100 s).
func cpuOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("bench-live reads CPU times from /proc (Linux only): %w", err)
	}
	// The command name (field 2) may hold spaces; fields count from its ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected fields", pid)
	}
	return time.Duration(u+s) * 10 * time.Millisecond, nil
}

func loadavg() string {
	f, err := os.Open("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	if fs := strings.Fields(line); len(fs) >= 3 {
		return strings.Join(fs[:3], " ")
	}
	return "unknown"
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// spread is "median [min–max]".
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	if len(xs) == 1 {
		return fmt.Sprintf("%.2f", xs[0])
	}
	return fmt.Sprintf("%.2f [%.2f–%.2f]", median(xs), slices.Min(xs), slices.Max(xs))
}
