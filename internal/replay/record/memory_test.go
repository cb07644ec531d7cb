package record

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// BenchmarkRecordBigBodies: 10 exchanges of 30 MiB at once through the
// recorder (real HTTP on 127.0.0.1), with 30 MiB response bodies
// ("response") or 30 MiB request and response bodies ("both"). Clients and
// upstream generate and discard their bodies as streams, so the process's
// peak resident memory (VmHWM, reset at the start) is the recorder's. It
// reports that peak, the most body bytes held in memory at once and how
// many bodies went to temporary files. Run one sub-benchmark per process
// for a clean peak; see docs/perf.md.
func BenchmarkRecordBigBodies(b *testing.B) {
	const size, exchanges = 30 << 20, 10
	chunk := []byte(strings.Repeat("x", 32<<10))
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/octet-stream")
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	up := serveLoopback(b, mux)
	for _, mode := range []string{"response", "both"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				p, dir, base := recordingProxy(b, up, "")
				runtime.GC()
				resetPeakRSS(b)
				var wg sync.WaitGroup
				for range exchanges {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var body io.Reader = http.NoBody
						if mode == "both" {
							body = io.LimitReader(repeatReader(chunk), size)
						}
						req, _ := http.NewRequest(http.MethodPost, base+"/big", body)
						if mode == "both" {
							req.ContentLength = size
						}
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						n, _ := io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if n != size {
							b.Errorf("response of %d bytes, want %d", n, size)
						}
					}()
				}
				wg.Wait()
				p.Wait()
				b.ReportMetric(float64(peakRSS(b))/(1<<20), "peak-rss-MiB")
				b.ReportMetric(float64(p.maxHeld.Load())/(1<<20), "held-MiB")
				b.ReportMetric(float64(p.spilled.Load()), "spilled")
				if got := len(p.Written()); got != exchanges {
					b.Errorf("%d fixtures written, want %d", got, exchanges)
				}
				os.RemoveAll(dir)
			}
		})
	}
}

type repeatReader []byte

func (r repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], r)
	}
	return n, nil
}

// resetPeakRSS resets the kernel's record of the process's peak resident
// set (Linux: "5" to /proc/self/clear_refs).
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// peakRSS reads VmHWM, the peak resident set since the last reset.
func peakRSS(b *testing.B) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal(fmt.Errorf("no VmHWM in /proc/self/status"))
	return 0
}
