package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/auditlog"
	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/examples/plugins/toolallowlist"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/sdk/gateway"
)

var factories = []gateway.Factory{inferenceparser.Factory(), mcpparser.Factory(), a2aparser.Factory(), guardrail.Factory(), toolallowlist.Factory(), auditlog.Factory()}

const chain6 = `outbound:
  - name: inference-parser
  - name: mcp-parser
  - name: a2a-parser
  - name: tool-allowlist
    config: {allow: [get_weather]}
  - name: guardrail
    config: {phrases: ["drop table"]}
  - name: audit-log
`

// chainPass has chain6's shape without its plugins' work: six plugins
// that continue everywhere, four of them on the frame path (as the
// guardrail and the three parsers are), so that its traces have the same
// events as chain6's and a replay through it is the runtime, the trace and
// the golden comparison alone.
const chainPass = `outbound:
  - name: p1
  - name: p2
  - name: p3
  - name: p4
  - name: p5
  - name: p6
`

// passFactories are chainPass's plugins: p1, p2, p3 and p5 stream.
var passFactories = func() []gateway.Factory {
	var out []gateway.Factory
	for i := 1; i <= 6; i++ {
		name := fmt.Sprintf("p%d", i)
		stream := i != 4 && i != 6
		out = append(out, gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) {
			if stream {
				return passFrames{passOnly{name}}, nil
			}
			return passOnly{name}, nil
		}})
	}
	return out
}()

// passOnly continues on the request and the whole response.
type passOnly struct{ name string }

func (p passOnly) Name() string { return p.name }
func (passOnly) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "continues everywhere"}
}
func (passOnly) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (passOnly) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// passFrames is passOnly that also continues on every frame.
type passFrames struct{ passOnly }

func (passFrames) OnResponseFrame(context.Context, *gateway.Exchange, []byte, bool) gateway.Action {
	return gateway.Continue()
}

// corpus writes n fixtures of frames SSE events each and their golden
// files for chain6.
func corpus(b *testing.B, n, frames int) replay.SuiteOptions {
	return corpusFor(b, n, frames, chain6, factories)
}

// corpusFor writes n fixtures of frames SSE events each and their golden
// files for the chain yaml describes, built from facs.
func corpusFor(b *testing.B, n, frames int, yaml string, facs []gateway.Factory) replay.SuiteOptions {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "chain.yaml"), []byte(yaml), 0o644)
	for i := range n {
		f := &fixture.Fixture{
			Request:  fixture.Request{Method: "POST", URL: "https://h/v1/chat/completions", Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"stream":true}`)},
			Response: fixture.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}},
		}
		for j := range frames {
			f.Response.Chunks = append(f.Response.Chunks, fixture.Chunk{Data: fmt.Appendf(nil, `data: {"choices":[{"index":0,"delta":{"content":" w%d"}}]}`+"\n\n", j)})
		}
		if err := fixture.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.fixture", i)), f); err != nil {
			b.Fatal(err)
		}
	}
	opts := replay.SuiteOptions{Chain: filepath.Join(dir, "chain.yaml"), Fixtures: dir, Golden: filepath.Join(dir, "golden"),
		Factories: facs, Parallel: runtime.GOMAXPROCS(0)}
	os.MkdirAll(opts.Golden, 0o755)
	up := opts
	up.Update = true
	if _, err := replay.RunSuite(context.Background(), up); err != nil {
		b.Fatal(err)
	}
	return opts
}

// BenchmarkReplayCorpus replays 1,000 fixtures of 200 frames each through
// a 6-plugin in-process chain and compares every golden file. Target:
// at most 2 s per op on 2 cores (-cpu 2).
func BenchmarkReplayCorpus(b *testing.B) {
	opts := corpus(b, 1000, 200)
	runtime.GC()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		res, err := replay.RunSuite(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Failed() {
				b.Fatalf("%s: %v %s", r.Name, r.Err, r.Diff)
			}
		}
		if len(res) != 1000 {
			b.Fatalf("%d results", len(res))
		}
	}
	// CPU seconds (user+sys) next to wall time: on a shared, loaded
	// machine the wall time says more about the neighbours.
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkReplayCorpusScale replays corpora of 10, 100 and 1,000
// fixtures of 200 frames (the ReplayCorpus shape) and reports CPU per
// fixture and per frame, for the scaling table in docs/perf.md.
func BenchmarkReplayCorpusScale(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("fixtures=%d", n), func(b *testing.B) {
			opts := corpus(b, n, 200)
			runtime.GC()
			cpu0 := cpuTime(b)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := replay.RunSuite(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				if len(res) != n {
					b.Fatalf("%d results", len(res))
				}
				for _, r := range res {
					if r.Failed() {
						b.Fatalf("%s: %v %s", r.Name, r.Err, r.Diff)
					}
				}
			}
			cpu := (cpuTime(b) - cpu0).Seconds() / float64(b.N)
			b.ReportMetric(cpu, "cpu-s/op")
			b.ReportMetric(cpu/float64(n)*1e3, "cpu-ms/fixture")
			b.ReportMetric(cpu/float64(n*200)*1e6, "cpu-µs/frame")
		})
	}
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDryrun10k runs the 10,000-event corpus stream through the
// inference parser, as abctl dryrun does. Target: at most 200 ms.
func BenchmarkDryrun10k(b *testing.B) {
	f, err := fixture.ReadFile("../../fixtures/bigstream/10k-events.fixture")
	if err != nil {
		b.Fatal(err)
	}
	ch, err := replay.LoadChain(context.Background(), "../../fixtures/bigstream/chain.yaml", gateway.Outbound, factories)
	if err != nil {
		b.Fatal(err)
	}
	defer ch.Close(context.Background())
	for b.Loop() {
		r := replay.Run(context.Background(), ch.Chain, f, replay.AsRecorded)
		if r.Outcome.Frames != 10000 || !strings.EqualFold(r.Outcome.Kind, "allow") {
			b.Fatalf("%+v", r.Outcome)
		}
	}
}

// BenchmarkReplayAgainstFloor measures, on one corpus of 1,000 fixtures of
// 200 frames, the replay and its floor, each as cpu-s/op (docs/perf.md
// divides them within one run):
//
//   - floor: reading the fixtures with as many workers and finding every
//     SSE event in them with bytes.Index, which any replay must do at least;
//   - floor+golden: that, and reading each golden file into a buffer the
//     worker reuses and counting its lines (one pass over its bytes),
//     which any golden comparison must do at least (a golden is about 7
//     times its fixture's size: four events per frame);
//   - replay/chain=pass: the replay (golden compare) through chainPass,
//     whose traces are chain6's without its plugins' work: the runtime,
//     the trace and the comparison;
//   - replay/chain=6: the replay through chain6 (three parsers, the
//     guardrail, two that only see the request).
func BenchmarkReplayAgainstFloor(b *testing.B) {
	opts := corpus(b, 1000, 200)
	pass := corpusFor(b, 1000, 200, chainPass, passFactories)
	files, err := filepath.Glob(filepath.Join(opts.Fixtures, "*.fixture"))
	if err != nil || len(files) != 1000 {
		b.Fatalf("%d fixtures: %v", len(files), err)
	}
	b.Run("floor", func(b *testing.B) { benchFloor(b, files, opts.Parallel, "") })
	b.Run("floor+golden", func(b *testing.B) { benchFloor(b, files, opts.Parallel, opts.Golden) })
	b.Run("replay/chain=pass", func(b *testing.B) { benchSuite(b, pass) })
	b.Run("replay/chain=6", func(b *testing.B) { benchSuite(b, opts) })
}

// benchFloor reads files with parallel workers and counts the SSE events
// in each with bytes.Index; with golden set it also reads each fixture's
// golden file there, into a reused buffer, and counts its lines.
func benchFloor(b *testing.B, files []string, parallel int, golden string) {
	runtime.GC()
	cpu0 := cpuTime(b)
	for b.Loop() {
		var wg sync.WaitGroup
		next := make(chan string)
		var events, lines atomic.Int64
		for range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var buf []byte
				for name := range next {
					data, err := os.ReadFile(name)
					if err != nil {
						b.Error(err)
						continue
					}
					events.Add(int64(count(data, "\n\n")))
					if golden == "" {
						continue
					}
					if buf, err = readInto(buf, replay.GoldenPath(golden, name)); err != nil {
						b.Error(err)
						continue
					}
					lines.Add(int64(bytes.Count(buf, []byte("\n"))))
				}
			}()
		}
		for _, f := range files {
			next <- f
		}
		close(next)
		wg.Wait()
		if events.Load() < 200*1000 || (golden != "" && lines.Load() < 4*200*1000) {
			b.Fatalf("%d events, %d golden lines", events.Load(), lines.Load())
		}
	}
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// readInto reads the file name into buf, grown as needed, and returns it.
func readInto(buf []byte, name string) ([]byte, error) {
	fh, err := os.Open(name)
	if err != nil {
		return buf, err
	}
	defer fh.Close()
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := fh.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// count is the number of sep in data, found with bytes.Index.
func count(data []byte, sep string) int {
	n := 0
	for i := 0; ; n++ {
		k := bytes.Index(data[i:], []byte(sep))
		if k < 0 {
			return n
		}
		i += k + len(sep)
	}
}

// benchSuite replays the suite opts names and fails on any failed case.
func benchSuite(b *testing.B, opts replay.SuiteOptions) {
	runtime.GC()
	cpu0 := cpuTime(b)
	b.ReportAllocs()
	for b.Loop() {
		res, err := replay.RunSuite(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Failed() {
				b.Fatalf("%s: %v %s", r.Name, r.Err, r.Diff)
			}
		}
	}
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}
