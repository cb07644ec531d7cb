package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/trace"
	"github.com/google/go-cmp/cmp"
)

// TestServeInvalidChain: a chain the runtime refuses is reported with
// every finding at its place in the file, and serve exits 1 without
// listening.
func TestServeInvalidChain(t *testing.T) {
	chain := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(chain, []byte("outbound:\n  - name: guardrail\n  - name: no-such-plugin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, false, nil, "serve", "--chain", chain, "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:0")
	if r.code != ExitFindings {
		t.Fatalf("exit %d, want 1: %s", r.code, r.err)
	}
	for _, want := range []string{chain + ":2:5: P6 guardrail", chain + ":3:5: P6 no-such-plugin", "fix:", "nothing was served"} {
		if !strings.Contains(r.err, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.err)
		}
	}
	if r := run(t, false, nil, "serve", "--chain", chain); r.code != ExitUsage {
		t.Errorf("serve without --upstream: exit %d, want 2", r.code)
	}
	// A ring too large to allocate is a usage error, before anything is
	// allocated (--ring 1000000000 once took over 4 GiB).
	if r := run(t, false, nil, "serve", "--chain", chain, "--upstream", "http://127.0.0.1:1", "--ring", "1000000000"); r.code != ExitUsage || !strings.Contains(r.err, "--ring is at most") {
		t.Errorf("--ring 1000000000: exit %d, %s", r.code, r.err)
	}
}

// TestServeSIGTERM runs abctl serve (this test binary in abctl mode, with
// no plugin compiled in) with a chain of three plugin binaries and
// --record, sends a stream and a JSON exchange through it, then SIGTERM:
// abctl exits 0 reporting both exchanges, no plugin process is left, and
// abctl replay of the recorded stream gives the trace the API showed.
func TestServeSIGTERM(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"part %d\"}}]}\n\n", i)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	defer up.Close()
	dir := t.TempDir()
	chain := filepath.Join(dir, "chain.yaml")
	if err := os.WriteFile(chain, []byte("outbound:\n  - name: inference-parser\n  - name: guardrail\n    config:\n      phrases: [\"drop table\"]\n  - name: audit-log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "rec")
	cmd := exec.Command(os.Args[0], "serve", "--chain", chain, "--upstream", up.URL, "--listen", "127.0.0.1:0", "--plugin-dir", binDir, "--record", rec)
	cmd.Env = append(os.Environ(), abctlEnv+"=1")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addr := regexp.MustCompile(`on (http://\S+) -> `)
	var base string
	// The "serving" line is the event; the bound is a hang guard (three
	// plugin processes start first).
	for deadline := time.Now().Add(60 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("abctl serve did not start: %s", stderr.String())
		}
	}
	for _, p := range []string{"/v1/stream", "/v1/json"} {
		resp, err := http.Post(base+p, "application/json", strings.NewReader(`{"stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", p, resp.StatusCode, body)
		}
	}
	var detail struct {
		Exchange struct {
			Fixture string `json:"fixture"`
		} `json:"exchange"`
		Trace replay.Report `json:"trace"`
	}
	// The fixture is written after the client's response ends; wait for
	// the API to name it (hang guard only).
	for deadline := time.Now().Add(60 * time.Second); detail.Exchange.Fixture == ""; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(base + "/_abkit/v1/exchanges/1")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == 200 {
			json.NewDecoder(resp.Body).Decode(&detail)
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("exchange 1 never got a fixture: %s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("abctl serve after SIGTERM: %v: %s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute): // hang guard only
		t.Fatalf("abctl serve still running 2 min after SIGTERM: %s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped: 2 exchange(s) served, 0 cut, 2 recorded") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if left := waitGone(t, binDir); len(left) > 0 {
		t.Errorf("plugin processes left after serve stopped: %v", left)
	}

	golden := filepath.Join(dir, "golden")
	if r := run(t, false, nil, "replay", "--chain", chain, "--fixtures", rec, "--golden", golden, "--update"); r.code != 0 {
		t.Fatalf("replay --update: exit %d: %s", r.code, r.err)
	}
	name := strings.TrimSuffix(filepath.Base(detail.Exchange.Fixture), ".fixture") + ".json"
	data, err := os.ReadFile(filepath.Join(golden, name))
	if err != nil {
		t.Fatal(err)
	}
	var replayed replay.Report
	if err := json.Unmarshal(data, &replayed); err != nil {
		t.Fatal(err)
	}
	if len(detail.Trace.Events) < 10 {
		t.Fatalf("live trace of the stream has %d events", len(detail.Trace.Events))
	}
	if diff := cmp.Diff(trace.WithoutDurations(detail.Trace.Events), replayed.Events); diff != "" {
		t.Errorf("replayed trace differs from the live one (-live +replay):\n%s", diff)
	}
	if diff := cmp.Diff(detail.Trace.Outcome, replayed.Outcome); diff != "" {
		t.Errorf("replayed outcome differs (-live +replay):\n%s", diff)
	}
}

// serve on an address beyond loopback warns, naming what it exposes, and
// its API requires the token it generated and printed once; --no-api
// turns the API off.
func TestServeBeyondLoopbackNeedsToken(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true}`)
	}))
	defer up.Close()
	chain := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(chain, []byte("outbound:\n  - name: audit-log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(extra ...string) (string, *lockedBuffer) {
		cmd := exec.Command(os.Args[0], append([]string{"serve", "--chain", chain, "--upstream", up.URL, "--listen", "0.0.0.0:0", "--plugin-dir", binDir}, extra...)...)
		cmd.Env = append(os.Environ(), abctlEnv+"=1")
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
		addr := regexp.MustCompile(`on http://\S+:(\d+) -> `)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if m := addr.FindStringSubmatch(stderr.String()); m != nil {
				return "http://127.0.0.1:" + m[1], stderr
			}
			if time.Now().After(deadline) {
				t.Fatalf("abctl serve did not start: %s", stderr.String())
			}
		}
	}
	status := func(url, token string) int {
		req, _ := http.NewRequest("GET", url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	base, stderr := start()
	out := stderr.String()
	if !strings.Contains(out, "warning: --listen 0.0.0.0:0") || !strings.Contains(out, "not a loopback address") || !strings.Contains(out, "event stream") {
		t.Fatalf("no warning naming what is exposed: %s", out)
	}
	m := regexp.MustCompile(`API token \(generated[^)]*\): ([0-9a-f]{32})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no generated token printed: %s", out)
	}
	if c := status(base+"/_abkit/v1/exchanges", ""); c != http.StatusUnauthorized {
		t.Fatalf("API without the token: %d, want 401", c)
	}
	if c := status(base+"/_abkit/v1/exchanges", m[1]); c != http.StatusOK {
		t.Fatalf("API with the token: %d", c)
	}

	base, _ = start("--no-api")
	if c := status(base+"/_abkit/v1/exchanges", ""); c != http.StatusNotFound {
		t.Fatalf("--no-api: %d, want 404", c)
	}
	if c := status(base+"/v1/x", ""); c != http.StatusOK {
		t.Fatalf("--no-api proxy: %d", c)
	}
}
