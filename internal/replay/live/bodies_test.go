package live

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bigUpstream answers /big with size bytes of JSON and /endless with an
// SSE data line that never ends.
func bigUpstream(t *testing.T, size int) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 256<<10)
		if r.URL.Path == "/v1/endless" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: ")
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"pad":"`)
		for n := 0; n < size; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}`)
	}))
	t.Cleanup(up.Close)
	return up
}

// peakHeap samples the heap in use until stop is closed.
func peakHeap(stop <-chan struct{}) *atomic.Uint64 {
	var peak atomic.Uint64
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return &peak
}

// A 512 MiB JSON body through a chain whose plugins read no body is
// relayed as it arrives: serve's heap stays far below the body (it once
// held a 1 GiB body whole, 3.95 GiB resident); the ring keeps --body-cap.
func TestServeLargeBodyNotHeld(t *testing.T) {
	const size = 512 << 20
	up := bigUpstream(t, size)
	s := startServe(t, up.URL, "outbound:\n  - name: audit-log\n", Options{}, time.Second)
	runtime.GC()
	stop := make(chan struct{})
	peak := peakHeap(stop)
	resp, err := client.Get(s.base + "/v1/big")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	close(stop)
	if err != nil || n < size {
		t.Fatalf("relayed %d bytes (%v), want %d", n, err, size)
	}
	if p := peak.Load(); p > 128<<20 {
		t.Fatalf("serve's heap peaked at %d MiB relaying a %d MiB body: it was held", p>>20, size>>20)
	} else {
		t.Logf("heap peak %d MiB for a %d MiB body", p>>20, size>>20)
	}
}

// An SSE data line that never ends is cut at the body bound (32 MiB):
// the client's stream breaks, and serve's heap stays bounded.
func TestServeEndlessSSELineCut(t *testing.T) {
	up := bigUpstream(t, 0)
	s := startServe(t, up.URL, testChain, Options{}, time.Second)
	runtime.GC()
	stop := make(chan struct{})
	peak := peakHeap(stop)
	resp, err := client.Get(s.base + "/v1/endless")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	close(stop)
	if err == nil {
		t.Fatal("an endless SSE line ended cleanly for the client")
	}
	var list struct{ Exchanges []Summary }
	deadline := time.Now().Add(hangGuard)
	for len(list.Exchanges) == 0 && time.Now().Before(deadline) {
		get(t, s.base+PathExchanges, &list)
	}
	if len(list.Exchanges) != 1 || !strings.Contains(list.Exchanges[0].Reason, "larger than") {
		t.Fatalf("exchanges %+v, want one whose reason names the bound", list.Exchanges)
	}
	if p := peak.Load(); p > 256<<20 {
		t.Fatalf("serve's heap peaked at %d MiB on an endless SSE line", p>>20)
	} else {
		t.Logf("heap peak %d MiB", p>>20)
	}
}
