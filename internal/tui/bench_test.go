package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/trace"
)

// catalogFile writes a catalog file of n plugins and returns options that
// load it.
func catalogFile(b *testing.B, n int) Options {
	var f catalog.File
	for i := range n {
		f.Plugins = append(f.Plugins, catalog.Descriptor{
			Name:         fmt.Sprintf("plugin-%04d", i),
			Description:  fmt.Sprintf("Synthetic plugin number %d for the TUI benchmarks", i),
			Families:     []string{"P"},
			Capabilities: &catalog.Capabilities{ReadsBody: i%2 == 0, Requires: []string{fmt.Sprintf("plugin-%04d", (i+1)%n)}},
			Behaviours:   []string{"stream"},
		})
	}
	data, err := json.Marshal(f)
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(b.TempDir(), "catalog.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	opts := testOptions(b)
	opts.Sources = []string{"file:" + p}
	opts.LoadCatalog = func(ctx context.Context) (*catalog.Catalog, error) {
		return catalog.Load(ctx, opts.Sources, catalog.Options{})
	}
	return opts
}

// benchStart measures New to the first full frame: catalog loaded, chain
// loaded and validated, screen rendered. It also reports the heap the
// started model holds (live-MiB, after a GC with the model still
// reachable) and the heap's peak over the iterations (peak-heap-MiB, the
// Go runtime's HeapSys high-water mark, which bounds what the process
// asked the OS for its heap).
func benchStart(b *testing.B, opts Options) {
	var m *Model
	for b.Loop() {
		m = loaded(b, opts, 120, 40)
		if len(m.Render()) == 0 {
			b.Fatal("empty frame")
		}
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MiB")
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "peak-heap-MiB")
	runtime.KeepAlive(m)
}

func BenchmarkStartBuiltin(b *testing.B)          { benchStart(b, testOptions(b)) }
func BenchmarkStartCatalogFile1000(b *testing.B)  { benchStart(b, catalogFile(b, 1000)) }
func BenchmarkStartCatalogFile10000(b *testing.B) { benchStart(b, catalogFile(b, 10000)) }

// BenchmarkKeystroke1000 is one key (update and view) with 1,000 plugins:
// moving the cursor, and typing into the filter.
func BenchmarkKeystroke1000(b *testing.B) {
	m := loaded(b, catalogFile(b, 1000), 120, 40)
	b.Run("move", func(b *testing.B) {
		keys := []tea.KeyPressMsg{k("j"), k("k")}
		i := 0
		for b.Loop() {
			m.Update(keys[i%2])
			_ = m.View()
			i++
		}
	})
	b.Run("filter", func(b *testing.B) {
		m.Update(k("/"))
		keys := []tea.KeyPressMsg{k("9"), k("backspace")}
		i := 0
		for b.Loop() {
			m.Update(keys[i%2])
			_ = m.View()
			i++
		}
	})
}

// benchTraceView renders the Trace tab over an n-event trace with the
// cursor in the middle: only visible rows render, so the cost must not
// grow with n.
func benchTraceView(b *testing.B, n int) {
	m := loaded(b, testOptions(b), 120, 40)
	r := &Run{Fixture: "synthetic"}
	for i := range n {
		r.Events = append(r.Events, trace.Event{Seq: i + 1, Family: trace.FamilyPipeline, Direction: "outbound",
			Hook: trace.HookOnResponseFrame, Plugin: "guardrail", Frame: trace.FrameIndex(i), Action: "continue", DurationNS: 1200})
		r.Frames = append(r.Frames, []byte(fmt.Sprintf("data: {\"n\":%d}\n\n", i)))
	}
	m.tr.setRun(r)
	m.tab = tabTrace
	m.tr.cursor = n / 2
	for b.Loop() {
		_ = m.View()
	}
}

func BenchmarkTraceView100(b *testing.B)   { benchTraceView(b, 100) }
func BenchmarkTraceView10000(b *testing.B) { benchTraceView(b, 10000) }
