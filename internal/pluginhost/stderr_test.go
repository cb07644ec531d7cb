package pluginhost_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// floodBytes is how much a flooding helper writes to stderr without a
// newline, before its handshake and again in OnRequest.
const floodBytes = 16 << 20

// floodStderr writes floodBytes of 'x' to stderr in 64 KiB writes, then
// a newline and the line end.
func floodStderr(end string) {
	chunk := []byte(strings.Repeat("x", 64<<10))
	for range floodBytes / len(chunk) {
		os.Stderr.Write(chunk)
	}
	os.Stderr.WriteString("\n" + end + "\n")
}

type stderrFlooder struct{ helperPlugin }

func (stderrFlooder) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	floodStderr("after the second flood")
	return gateway.Continue()
}

func serveStderrFlood(mode string) bool {
	if mode != "stderr-flood" {
		return false
	}
	floodStderr("after the first flood") // before the handshake: go-plugin reads it in 64 KiB pieces
	b := helperBundle(mode)
	b.Pipeline = &gateway.Factory{Name: b.Name, New: func(json.RawMessage) (gateway.Plugin, error) { return stderrFlooder{}, nil }}
	sdk.Serve(b)
	return true
}

// lockedCount counts what the host forwards of the plugin's stderr.
type lockedCount struct {
	mu      sync.Mutex
	n       int
	longest int
}

func (c *lockedCount) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += len(p)
	c.longest = max(c.longest, len(p))
	return len(p), nil
}

// A plugin writing 16 MiB to stderr without a newline, before its
// handshake and after it, costs the host one line's bound (issue 26: the
// partial line was held whole until its newline): the line is forwarded
// and kept cut at 4 KiB, saying so, the rest of it is skipped, and the
// lines after it arrive.
func TestStderrLongLineBounded(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := &lockedCount{}
	opts := helperOpts("stderr-flood")
	opts.StartTimeout, opts.CallTimeout, opts.Stderr = time.Minute, time.Minute, out
	p, err := pluginhost.Load(context.Background(), self, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if res := runExchange(t, p); res.Err != nil {
		t.Fatal(res.Err)
	}
	// The second flood crosses go-plugin's stdio stream after the call
	// returned: wait for its last line (a hang guard bounds the wait).
	var lines []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		lines = p.StderrLines()
		if slices.Contains(lines, "after the second flood") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lines after the flood never arrived; kept %d lines", len(lines))
		}
	}
	var cut int
	for _, l := range lines {
		if len(l) > 4<<10+200 {
			t.Errorf("a kept line of %d bytes", len(l))
		}
		if strings.HasPrefix(l, "xxxx") {
			cut++
			if !strings.HasSuffix(l, "… (line cut at 4096 bytes, the limit of one stderr line; the rest of it is skipped)") || len(l)-len(strings.TrimLeft(l, "x")) != 4<<10 {
				t.Errorf("the flood line is not cut at 4 KiB saying so: %q…%q", l[:20], l[len(l)-120:])
			}
		}
	}
	if cut != 2 || !slices.Contains(lines, "after the first flood") {
		t.Errorf("want both floods cut and the lines after them kept; got %d cut lines in %q", cut, lines)
	}
	held := pluginhost.StderrHeld(p)
	out.mu.Lock()
	n, longest := out.n, out.longest
	out.mu.Unlock()
	if held > 8<<10 || n > 64<<10 {
		t.Errorf("%d bytes held for the line being written, %d forwarded (longest write %d): want at most 8 KiB and 64 KiB for %d MiB written",
			held, n, longest, 2*floodBytes>>20)
	}
	t.Logf("%d MiB of stderr without a newline: %d bytes held at the most, %d forwarded in %d lines", 2*floodBytes>>20, held, n, len(lines))
}

// runExchange runs one GET exchange, with a small JSON answer, through a
// chain of p alone.
func runExchange(t *testing.T, p *pluginhost.Plugin) *pipeline.Result {
	t.Helper()
	f, _ := p.Factory()
	c, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{{Plugin: f.Name}}}, []gateway.Factory{f}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c.Run(context.Background(), pipeline.Request{Request: gateway.Request{Method: "GET", URL: "/"}},
		pipeline.Upstream{Status: 200, Header: http.Header{}, Body: []byte("{}")}, pipeline.ExchangeOptions{})
}
