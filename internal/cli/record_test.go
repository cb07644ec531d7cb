package cli

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/replay/fixture"
)

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRecordSIGINT runs abctl record (this test binary in abctl mode),
// completes three exchanges through it, leaves a fourth streaming and
// sends SIGINT: the three finished exchanges are kept as fixtures that
// read back, the cut stream leaves nothing, and no temporary file is left
// in the out directory.
func TestRecordSIGINT(t *testing.T) {
	streaming := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/done":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`)
		case "/v1/short-stream":
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{"data: a\n\n", "data: b\n\n", "data: [DONE]\n\n"} {
				io.WriteString(w, ev)
				w.(http.Flusher).Flush()
			}
		case "/v1/endless":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: first\n\n")
			w.(http.Flusher).Flush()
			close(streaming)
			<-r.Context().Done() // never finishes on its own
		}
	}))
	defer up.Close()
	out := filepath.Join(t.TempDir(), "out")

	cmd, stderr, base := startRecord(t, up.URL, out)
	for _, p := range []string{"/v1/done", "/v1/short-stream", "/v1/done"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := http.Get(base + "/v1/endless")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "data: first\n" {
		t.Fatalf("first event %q, %v", line, err)
	}
	<-streaming
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("abctl record after SIGINT: %v: %s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("abctl record still running 15 s after SIGINT: %s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped: 3 exchange(s) recorded") {
		t.Errorf("stderr does not report 3 recorded exchanges: %s", stderr.String())
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), fixture.Ext) || strings.HasPrefix(e.Name(), ".") {
			t.Errorf("stray file in the out directory: %s", e.Name())
			continue
		}
		f, err := fixture.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Errorf("kept fixture does not read back: %v", err)
			continue
		}
		paths = append(paths, strings.TrimPrefix(f.Request.URL, up.URL))
	}
	if got := strings.Join(paths, ","); got != "/v1/done,/v1/short-stream,/v1/done" {
		t.Errorf("recorded %s, want the three finished exchanges in order", got)
	}
}
