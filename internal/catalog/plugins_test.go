package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abkit/abkit/internal/testbin"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/abkit/abkit/examples/plugins/builtin"
	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/cli"
	"github.com/abkit/abkit/sdk/gateway"
)

// plugins builds the example plugin binaries on first use and hands every
// later caller the same directory. It is lazy, not in TestMain, because a
// fuzz run starts the test binary once per worker: building there cost
// each worker the whole build before its first exec (and the 60 s fuzz
// runs of this package most of their time).
var plugins struct {
	once sync.Once
	dir  string
	err  error
}

func binDir(tb testing.TB) string {
	tb.Helper()
	plugins.once.Do(func() {
		plugins.dir, plugins.err = os.MkdirTemp("", "abkit-catalog-plugins-")
		if plugins.err != nil {
			return
		}
		if err := testbin.Build(context.Background(), plugins.dir, "./examples/plugins/..."); err != nil {
			plugins.err = fmt.Errorf("building the example plugins: %w", err)
		}
	})
	if plugins.err != nil {
		tb.Fatal(plugins.err)
	}
	return plugins.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if plugins.dir != "" {
		os.RemoveAll(plugins.dir)
	}
	os.Exit(code)
}

// countingDescriber is the real plugin host's describer, counting the
// processes it starts (one per Describe call).
type countingDescriber struct {
	d      catalog.Describer
	starts atomic.Int64
}

func (c *countingDescriber) Describe(ctx context.Context, path string) ([]catalog.Descriptor, error) {
	c.starts.Add(1)
	return c.d.Describe(ctx, path)
}

func builtins() []catalog.Builtin {
	var out []catalog.Builtin
	for _, p := range builtin.All() {
		out = append(out, catalog.FromSDK(p))
	}
	return out
}

// children lists the live processes whose parent is this test process, so
// a test can prove the describer reaped every plugin it started.
func children(t testing.TB) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == me && f[0] != "Z" {
			out = append(out, e.Name()+" "+s[:strings.LastIndexByte(s, ')')+1])
		}
	}
	return out
}

func copyFile(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDirSourceRealBinaries lists a directory of the real example plugin
// binaries next to a shell script and a non-executable file: every plugin
// is listed with the descriptor its compiled-in twin has, the two other
// files are skipped with a note, no plugin process outlives the listing,
// and the second listing comes from the cache without starting any process.
func TestDirSourceRealBinaries(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	bins := binDir(t)
	ents, err := os.ReadDir(bins)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		copyFile(t, filepath.Join(bins, e.Name()), filepath.Join(dir, e.Name()), 0o755)
	}
	if err := os.WriteFile(filepath.Join(dir, "script.sh"), []byte("#!/bin/sh\necho 'not a plugin'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("plugins live here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cd := &countingDescriber{d: cli.NewDescriber()}
	opts := catalog.Options{Builtin: builtins, Describer: cd, CacheDir: cache}
	spec := "dir:" + dir

	ctx := context.Background()
	want, err := catalog.Load(ctx, []string{"builtin"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := catalog.Load(ctx, []string{spec}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if left := children(t); len(left) > 0 {
		t.Errorf("plugin processes left after the listing: %v", left)
	}
	if n := cd.starts.Load(); n != int64(len(ents)) {
		t.Errorf("first listing started %d processes, want %d (every plugin binary, not the script without the marker)", n, len(ents))
	}
	if len(got.Plugins) != len(ents) {
		t.Errorf("listed %d plugins from %d binaries: %v", len(got.Plugins), len(ents), got.Names())
	}
	for _, d := range got.Plugins {
		if d.Origin.Kind != catalog.OriginBinary || d.Origin.Source != spec || filepath.Dir(d.Origin.Path) != dir || len(d.Origin.SHA256) != 64 {
			t.Errorf("%s: origin = %+v, want a binary in %s with its hash", d.Name, d.Origin, dir)
		}
		w, ok := want.Lookup(d.Name)
		if !ok {
			t.Errorf("binary plugin %s has no built-in twin", d.Name)
			continue
		}
		if diff := cmp.Diff(*w, d, cmpopts.IgnoreFields(catalog.Descriptor{}, "Origin"), cmpopts.EquateEmpty(), schemaAsJSON); diff != "" {
			t.Errorf("%s: binary descriptor differs from the built-in one (-builtin +binary):\n%s", d.Name, diff)
		}
	}
	notes := map[string]string{}
	for _, n := range got.Notes {
		notes[filepath.Base(n.Path)] = n.Msg
	}
	for file, msg := range map[string]string{"script.sh": `without an "abkit-plugin" comment line`, "README.txt": "not executable"} {
		if !strings.Contains(notes[file], msg) {
			t.Errorf("note for %s = %q, want it to contain %q", file, notes[file], msg)
		}
	}
	if len(notes) != 2 {
		t.Errorf("notes = %v, want exactly the script and the text file", got.Notes)
	}

	// The second listing comes from the cache: no process at all.
	before := cd.starts.Load()
	again, err := catalog.Load(ctx, []string{spec}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := cd.starts.Load() - before; n != 0 {
		t.Errorf("cached listing started %d processes, want 0", n)
	}
	if diff := cmp.Diff(got, again, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("cached listing differs (-first +cached):\n%s", diff)
	}
	if lint := catalog.Lint(again); len(lint) != 0 {
		t.Errorf("lint on the cached binaries: %v", lint)
	}
}

// schemaAsJSON compares config schemas by their JSON form: a default of 1000
// crosses the process boundary as JSON and comes back a float64.
var schemaAsJSON = cmp.Transformer("json", func(c *gateway.ConfigSchema) string {
	b, _ := json.Marshal(c)
	return string(b)
})

// pluginCopies copies the example binaries round-robin into n distinct
// files of dir.
func pluginCopies(b *testing.B, dir string, n int) {
	bins := binDir(b)
	ents, err := os.ReadDir(bins)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		e := ents[i%len(ents)]
		copyFile(b, filepath.Join(bins, e.Name()), filepath.Join(dir, fmt.Sprintf("%s-%02d", e.Name(), i)), 0o755)
	}
}

// BenchmarkDescribe50Binaries describes 50 real plugin binaries (copies of
// the examples under distinct paths): cold, each iteration with an empty
// cache so every binary is hashed, started, described and reaped; and from
// the cache, where no process starts.
func BenchmarkDescribe50Binaries(b *testing.B) {
	dir := b.TempDir()
	pluginCopies(b, dir, 50)
	spec := []string{"dir:" + dir}
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		cd := &countingDescriber{d: cli.NewDescriber()}
		for b.Loop() {
			b.StopTimer()
			cache := b.TempDir()
			b.StartTimer()
			c, err := catalog.Load(ctx, spec, catalog.Options{Describer: cd, CacheDir: cache})
			if err != nil || len(c.Plugins) != 50 {
				b.Fatal(err, len(c.Plugins), c.Notes)
			}
		}
		if left := children(b); len(left) > 0 {
			b.Fatalf("plugin processes left: %v", left)
		}
	})
	b.Run("cached", func(b *testing.B) {
		cd := &countingDescriber{d: cli.NewDescriber()}
		opts := catalog.Options{Describer: cd, CacheDir: b.TempDir()}
		if _, err := catalog.Load(ctx, spec, opts); err != nil {
			b.Fatal(err)
		}
		warm := cd.starts.Load()
		for b.Loop() {
			c, err := catalog.Load(ctx, spec, opts)
			if err != nil || len(c.Plugins) != 50 {
				b.Fatal(err, len(c.Plugins))
			}
		}
		if n := cd.starts.Load() - warm; n != 0 {
			b.Fatalf("cached listings started %d processes", n)
		}
	})
}
