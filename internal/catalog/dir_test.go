package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/probe"
	"github.com/abkit/abkit/sdk/gateway"
)

// fakeDescriber stands in for the plugin host: a file whose content starts
// with "plugin:NAME" is a plugin, "hang" never answers, "crash" fails after
// the handshake, anything else is not a plugin.
type fakeDescriber struct{ calls atomic.Int64 }

func (f *fakeDescriber) Describe(ctx context.Context, path string) ([]Descriptor, error) {
	f.calls.Add(1)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// The last line: the ones before it make the file a script with the
	// marker, which the dir: source starts.
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	s := lines[len(lines)-1]
	switch {
	case strings.HasPrefix(s, "plugin:"):
		name := strings.TrimPrefix(s, "plugin:")
		caps := gateway.Capabilities{ReadsBody: true, Description: "Fake plugin " + name}
		other := caps
		if strings.HasSuffix(name, "-flaky") {
			other.ReadsBody = false // P2: the second instance disagrees
		}
		return []Descriptor{{
			Name: name, Description: caps.Description, Capabilities: FromGateway(caps),
			Observed: []probe.Observed{{Name: name, Capabilities: caps}, {Name: name, Capabilities: other}},
		}}, nil
	case s == "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case s == "slow":
		// As the go-plugin host reports its own start timeout.
		return nil, fmt.Errorf("start: %w", context.DeadlineExceeded)
	case s == "crash":
		return nil, errors.New("plugin exited with status 2")
	}
	return nil, fmt.Errorf("%w: no handshake cookie", ErrNotPlugin)
}

// DescribeCommand describes the script a manifest names last, run in
// cmd.Dir.
func (f *fakeDescriber) DescribeCommand(ctx context.Context, cmd Command) ([]Descriptor, error) {
	p := cmd.Argv[len(cmd.Argv)-1]
	if !filepath.IsAbs(p) {
		p = filepath.Join(cmd.Dir, p)
	}
	return f.Describe(ctx, p)
}

// fake is the content of a file the fake describer answers as s, with the
// marker line that makes a dir: source start it.
func fake(s string) string { return "#!/bin/sh\n# abkit-plugin\n" + s }

func writeExec(t testing.TB, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDirSource(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	writeExec(t, dir, "alpha", fake("plugin:alpha"), 0o755)
	beta := writeExec(t, dir, "beta", fake("plugin:beta-flaky"), 0o755)
	writeExec(t, dir, "script.sh", "#!/bin/sh\necho hi", 0o755)
	writeExec(t, dir, "notplugin", fake("echo hi"), 0o755)
	writeExec(t, dir, "hang", fake("hang"), 0o755)
	writeExec(t, dir, "README", "not executable", 0o644)
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	fd := &fakeDescriber{}
	opts := Options{Describer: fd, CacheDir: cache, DescribeTimeout: 200 * time.Millisecond}
	spec := "dir:" + dir

	load := func() *Catalog {
		t.Helper()
		c, err := Load(context.Background(), []string{spec}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := load()
	if got := strings.Join(c.Names(), ","); got != "alpha,beta-flaky" {
		t.Fatalf("names = %s", got)
	}
	notes := map[string]string{}
	for _, n := range c.Notes {
		notes[filepath.Base(n.Path)] = n.Msg
	}
	for file, want := range map[string]string{"README": "not executable", "script.sh": `without an "abkit-plugin" comment line`, "notplugin": "not an abkit plugin", "hang": "no handshake within 200ms"} {
		if !strings.Contains(notes[file], want) {
			t.Errorf("note for %s = %q, want it to contain %q", file, notes[file], want)
		}
	}
	if len(notes) != 4 {
		t.Errorf("notes = %v, want 4", c.Notes)
	}
	if n := fd.calls.Load(); n != 4 {
		t.Errorf("first listing described %d files, want 4 (not the script without the marker)", n)
	}
	b, _ := c.Lookup("beta-flaky")
	sum := sha256.Sum256([]byte(fake("plugin:beta-flaky")))
	if b.Origin.Kind != OriginBinary || b.Origin.Path != beta || b.Origin.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("origin = %+v", b.Origin)
	}
	if got := lintRules(Lint(c), "beta-flaky"); got != "P2" {
		t.Errorf("lint beta-flaky = %q, want P2", got)
	}

	// Second listing: plugins and the non-plugin come from the cache; only
	// the binary that timed out is tried again.
	c2 := load()
	if n := fd.calls.Load(); n != 5 {
		t.Errorf("after the second listing %d describes, want 5 (only the hanging file again)", n)
	}
	if got := lintRules(Lint(c2), "beta-flaky"); got != "P2" {
		t.Errorf("cached lint beta-flaky = %q, want P2 (observations must survive the cache)", got)
	}
	b2, _ := c2.Lookup("beta-flaky")
	if !reflect.DeepEqual(b2.Origin, b.Origin) || b2.Description != b.Description {
		t.Errorf("cached %+v, want %+v", b2, b)
	}

	// A changed binary is described again.
	writeExec(t, dir, "alpha", fake("plugin:alpha2"), 0o755)
	future := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "alpha"), future, future)
	c3 := load()
	if _, ok := c3.Lookup("alpha2"); !ok {
		t.Errorf("changed binary not described again: %v", c3.Names())
	}
}

func lintRules(fs []Finding, plugin string) string {
	var out []string
	for _, f := range fs {
		if f.Plugin == plugin {
			out = append(out, f.Rule)
		}
	}
	return strings.Join(out, ",")
}

func TestDirSourceErrors(t *testing.T) {
	dir := t.TempDir()
	writeExec(t, dir, "crashy", fake("crash"), 0o755)
	_, err := Load(context.Background(), []string{"dir:" + dir}, Options{Describer: &fakeDescriber{}, CacheDir: "-"})
	var re *ReadError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "crashy") || !strings.Contains(err.Error(), "status 2") {
		t.Errorf("crash: err = %v, want a ReadError naming the binary", err)
	}
	_, err = Load(context.Background(), []string{"dir:" + dir}, Options{})
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "plugin host") {
		t.Errorf("no describer: err = %v", err)
	}
	_, err = Load(context.Background(), []string{"dir:" + filepath.Join(dir, "nope")}, Options{})
	if !errors.As(err, &re) {
		t.Errorf("missing dir: err = %v, want a ReadError", err)
	}
}

// TestDuplicateAcrossSources: the same name from two sources is listed
// twice, and lint names both sources (P1).
func TestDuplicateAcrossSources(t *testing.T) {
	dir := t.TempDir()
	writeExec(t, dir, "mcp", fake("plugin:mcp-parser"), 0o755)
	c, err := Load(context.Background(), []string{"file:testdata/catalog.yaml", "dir:" + dir}, Options{Describer: &fakeDescriber{}, CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	var p1 []Finding
	for _, f := range Lint(c) {
		if f.Rule == "P1" {
			p1 = append(p1, f)
		}
	}
	if len(p1) != 1 || p1[0].Plugin != "mcp-parser" || !strings.Contains(p1[0].Msg, "file:testdata/catalog.yaml") || !strings.Contains(p1[0].Msg, "dir:"+dir) {
		t.Errorf("P1 findings = %v", p1)
	}
	if d, _ := c.Lookup("mcp-parser"); d.Origin.Kind != OriginFile {
		t.Errorf("Lookup returned %s, want the first source's", d.Origin.Kind)
	}
}

// BenchmarkDescribeFromCache lists 50 plugin binaries whose descriptions
// are cached: no describer call, only stat and read the cache entries.
func BenchmarkDescribeFromCache(b *testing.B) {
	dir, cache := b.TempDir(), b.TempDir()
	for i := range 50 {
		writeExec(b, dir, fmt.Sprintf("p%02d", i), fake(fmt.Sprintf("plugin:p%02d", i)), 0o755)
	}
	fd := &fakeDescriber{}
	opts := Options{Describer: fd, CacheDir: cache}
	if _, err := Load(context.Background(), []string{"dir:" + dir}, opts); err != nil {
		b.Fatal(err)
	}
	warm := fd.calls.Load()
	b.ResetTimer()
	for b.Loop() {
		c, err := Load(context.Background(), []string{"dir:" + dir}, opts)
		if err != nil || len(c.Plugins) != 50 {
			b.Fatal(err, len(c.Plugins))
		}
	}
	if fd.calls.Load() != warm {
		b.Fatalf("cache missed: %d describes after warm-up", fd.calls.Load()-warm)
	}
}

// TestDirCacheOnlyDefiniteAnswers: a binary that timed out is not
// remembered (the next load describes it again), a description and a
// "not a plugin" are; an entry an older abctl wrote for a timeout is
// ignored; CleanCache empties the cache.
func TestDirCacheOnlyDefiniteAnswers(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	slow := writeExec(t, dir, "slow", fake("slow"), 0o755)
	writeExec(t, dir, "good", fake("plugin:good"), 0o755)
	writeExec(t, dir, "other", fake("not a plugin"), 0o755)
	fd := &fakeDescriber{}
	opts := Options{Describer: fd, CacheDir: cache}
	load := func() *Catalog {
		t.Helper()
		c, err := Load(context.Background(), []string{"dir:" + dir}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := load()
	if fd.calls.Load() != 3 || len(c.Plugins) != 1 {
		t.Fatalf("first load: %d calls, %d plugins", fd.calls.Load(), len(c.Plugins))
	}
	var note string
	for _, n := range c.Notes {
		if n.Path == slow {
			note = n.Msg
		}
	}
	if !strings.Contains(note, "not cached") {
		t.Errorf("slow binary note %q", note)
	}
	load()
	if got := fd.calls.Load(); got != 4 {
		t.Fatalf("second load made %d calls in all, want 4: only the slow binary described again", got)
	}
	// An entry an older abctl cached for a timeout.
	abs, _ := filepath.Abs(slow)
	info, _ := os.Stat(abs)
	(&describeCache{dir: cache}).put(cacheEntry{Path: abs, Size: info.Size(), ModTime: info.ModTime().UnixNano(), NotPlugin: "not an abkit plugin: timeout while waiting for plugin to start"})
	load()
	if got := fd.calls.Load(); got != 5 {
		t.Fatalf("a cached timeout was trusted: %d calls, want 5", got)
	}
	gotDir, n, err := CleanCache(opts)
	if err != nil || gotDir != cache || n != 3 {
		t.Fatalf("CleanCache = %q, %d, %v; want %q, 3 (good, other and the old slow entry)", gotDir, n, err, cache)
	}
	load()
	if got := fd.calls.Load(); got != 8 {
		t.Fatalf("after clean: %d calls, want 8", got)
	}
	if _, n, _ := CleanCache(Options{CacheDir: "-"}); n != 0 {
		t.Errorf("cache off: removed %d", n)
	}
}
