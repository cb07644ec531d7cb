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
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/examples/plugins/auditlog"
	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/sdk/gateway"
)

// hangGuard bounds every wait of these tests; it only fires when
// something hangs, never on a slow machine.
const hangGuard = 60 * time.Second

// testChain parses inference streams, rejects "drop table" on either side
// with 451 and keeps an audit line: request, frame and finish calls.
const testChain = `outbound:
  - name: inference-parser
  - name: guardrail
    config:
      phrases: ["drop table"]
      status: 451
  - name: audit-log
`

func factories() []gateway.Factory {
	return []gateway.Factory{inferenceparser.Factory(), guardrail.Factory(), auditlog.Factory()}
}

func frame(text string) string {
	return fmt.Sprintf("data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", text)
}

// upstream is a real HTTP server on 127.0.0.1:
//   - /json answers a JSON body; with ?secret, one holding an api_key;
//   - /stream answers n SSE frames (?n=, default 3), flushed one by one;
//     with ?secret, the first frame holds an api_key;
//   - /gated sends frame 0, then one more frame each time the test
//     releases gate, up to 3, then ends; it reports each request on
//     arrived.
type upstream struct {
	*httptest.Server
	gate    chan struct{}
	arrived chan struct{}
}

// secretMark is part of every credential the tests send or the upstream
// answers: it must never appear in anything serve serves, logs or writes.
const secretMark = "SECRETSECRET"

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{gate: make(chan struct{}), arrived: make(chan struct{}, 100)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/v1/json":
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Query().Has("secret") {
				fmt.Fprintf(w, `{"ok":true,"api_key":"sk-live-`+secretMark+`abcdefghijkl","echo_bytes":%d}`, len(body))
				return
			}
			fmt.Fprintf(w, `{"ok":true,"echo_bytes":%d}`, len(body))
		case "/v1/stream":
			n := 3
			fmt.Sscan(r.URL.Query().Get("n"), &n)
			w.Header().Set("Content-Type", "text/event-stream")
			if r.URL.Query().Has("secret") {
				io.WriteString(w, `data: {"api_key":"sk-live-`+secretMark+`streamedkey"}`+"\n\n")
				w.(http.Flusher).Flush()
			}
			for i := range n {
				io.WriteString(w, frame(fmt.Sprintf("part %d", i)))
				w.(http.Flusher).Flush()
			}
		case "/v1/gated":
			u.arrived <- struct{}{}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, frame("first"))
			w.(http.Flusher).Flush()
			for i := 1; i <= 3; i++ {
				select {
				case <-u.gate:
				case <-r.Context().Done():
					return
				}
				io.WriteString(w, frame(fmt.Sprintf("next %d", i)))
				w.(http.Flusher).Flush()
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(u.Close)
	return u
}

// served is a running Server on 127.0.0.1.
type served struct {
	*Server
	base  string
	chain *replay.Chain
	stop  func() error
}

// startServe builds the chain from yaml, starts a Server in front of up
// with opts and stops it (and the chain) when the test ends.
func startServe(t *testing.T, up string, yaml string, opts Options, grace time.Duration) *served {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cf, err := catalog.ReadChainFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := replay.LoadChain(context.Background(), path, gateway.Outbound, factories())
	if err != nil {
		t.Fatal(err)
	}
	opts.Upstream, opts.Chain, opts.ChainFile, opts.Factories = up, ch, cf, factories()
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, grace) }()
	var once sync.Once
	var serveErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case serveErr = <-done:
			case <-time.After(hangGuard):
				serveErr = fmt.Errorf("Serve did not return within %s of the stop", hangGuard)
			}
		})
		return serveErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
		ch.Close(context.Background())
	})
	return &served{Server: srv, base: "http://" + ln.Addr().String(), chain: ch, stop: stop}
}

var client = &http.Client{Timeout: hangGuard, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func get(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, data)
		}
	}
	return resp.StatusCode
}

// sseEvent is one server-sent event.
type sseEvent struct {
	id, name, data string
}

// readEvent reads the next event (or comment block) from r.
func readEvent(r *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\n")
		if line == "" {
			return ev, nil
		}
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "id":
			ev.id = v
		case "event":
			ev.name = v
		case "data":
			ev.data = v
		default:
			if strings.HasPrefix(line, ":") {
				ev.name = "comment"
			}
		}
	}
}

// subscribe opens /v1/events and returns its reader once the server has
// said it is subscribed, so that traffic sent afterwards is seen.
func subscribe(t *testing.T, base string) *bufio.Reader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+PathEvents, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("GET %s: %d %s", PathEvents, resp.StatusCode, ct)
	}
	r := bufio.NewReader(resp.Body)
	ev, err := readEvent(r)
	if err != nil || ev.name != "comment" {
		t.Fatalf("first block of the event stream: %+v, %v; want the subscribed comment", ev, err)
	}
	return r
}
