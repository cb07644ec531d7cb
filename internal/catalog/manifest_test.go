package catalog

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/sdk"
)

func TestCookieIsTheSDKs(t *testing.T) {
	if got := sdk.Handshake().MagicCookieValue; got != Cookie {
		t.Fatalf("catalog.Cookie = %q, the SDK's handshake cookie is %q", Cookie, got)
	}
}

// TestDirRecognisesPlugins: a dir: source starts a native executable that
// holds the cookie, a script with the marker line and a manifest's command
// line; never a helper script, a native executable without the cookie or
// the files a manifest names on their own.
func TestDirRecognisesPlugins(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	// A native executable: ELF magic, the cookie past the first 4 KiB and
	// across a 1 MiB read boundary.
	elf := append([]byte{0x7f, 'E', 'L', 'F'}, make([]byte, 1<<20-10)...)
	elf = append(elf, []byte(Cookie+"\nplugin:native")...)
	if err := os.WriteFile(filepath.Join(dir, "native"), elf, 0o755); err != nil {
		t.Fatal(err)
	}
	writeExec(t, dir, "helper-bin", string([]byte{0x7f, 'E', 'L', 'F'})+"\nplugin:helper-bin", 0o755)
	writeExec(t, dir, "helper.sh", "#!/bin/sh\n# a helper of the plugins, not one\nplugin:helper", 0o755)
	writeExec(t, dir, "marked.py", "#!/usr/bin/env python3\n// abkit-plugin\nplugin:marked", 0o755)
	// A launcher and the script it starts: listed once, through the
	// manifest; the script is keyed by its content.
	impl := writeExec(t, dir, "impl.py", fake("plugin:launched"), 0o644)
	writeExec(t, dir, "launched"+ManifestSuffix, `{"argv": ["sh", "impl.py"], "files": ["lib/*.py"]}`, 0o644)
	if err := os.Mkdir(filepath.Join(dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	lib := writeExec(t, filepath.Join(dir, "lib"), "util.py", "x = 1", 0o644)

	fd := &fakeDescriber{}
	opts := Options{Describer: fd, CacheDir: cache, DescribeTimeout: 5 * time.Second}
	load := func() *Catalog {
		t.Helper()
		c, err := Load(context.Background(), []string{"dir:" + dir}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := load()
	if got := strings.Join(c.Names(), ","); got != "launched,marked,native" {
		t.Fatalf("names = %s, want launched,marked,native; notes %v", got, c.Notes)
	}
	if n := fd.calls.Load(); n != 3 {
		t.Errorf("described %d files, want 3 (never a helper)", n)
	}
	notes := map[string]string{}
	for _, n := range c.Notes {
		notes[filepath.Base(n.Path)] = n.Msg
	}
	for file, want := range map[string]string{"helper-bin": "without abkit's handshake cookie", "helper.sh": "comment line"} {
		if !strings.Contains(notes[file], want) {
			t.Errorf("note for %s = %q, want it to contain %q", file, notes[file], want)
		}
	}
	if _, ok := notes["impl.py"]; ok {
		t.Errorf("the manifest's script has a note of its own: %v", c.Notes)
	}
	d, _ := c.Lookup("launched")
	sh := d.Origin.Argv[0]
	if want := []string{sh, "impl.py"}; !reflect.DeepEqual(d.Origin.Argv, want) || d.Origin.Dir != dir || !filepath.IsAbs(sh) {
		t.Errorf("origin %+v: want argv [/…/sh impl.py] in %s", d.Origin, dir)
	}
	if got := d.Origin.Command(); got.Dir != dir || len(got.Argv) != 2 {
		t.Errorf("Command() = %+v", got)
	}

	// From the cache: nothing started.
	load()
	if n := fd.calls.Load(); n != 3 {
		t.Errorf("cached listing described %d more", n-3)
	}
	// An edit to the script the manifest starts, then to a file it names:
	// each is seen without --no-cache.
	future := time.Now().Add(time.Hour)
	writeExec(t, dir, "impl.py", fake("plugin:launched2"), 0o644)
	os.Chtimes(impl, future, future)
	if _, ok := load().Lookup("launched2"); !ok {
		t.Errorf("an edit to impl.py was not seen")
	}
	os.Chtimes(lib, future.Add(time.Minute), future.Add(time.Minute))
	load()
	if n := fd.calls.Load(); n != 5 {
		t.Errorf("after touching lib/util.py: %d describes, want 5", n)
	}
}

func TestReadManifestErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, want string }{
		{`{"argv": []}`, "field argv"},
		{`{"args": ["x"]}`, `unknown field "args"`},
		{`{"argv": ["no-such-program-abkit"]}`, "argv[0]"},
		{`[`, "want {"},
	} {
		p := writeExec(t, dir, "bad"+ManifestSuffix, tc.body, 0o644)
		_, _, err := ReadManifest(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err = %v, want it to name the file and %q", tc.body, err, tc.want)
		}
	}
}

func TestHasMarker(t *testing.T) {
	for head, want := range map[string]bool{
		"#!/bin/sh\n# abkit-plugin\n":                                 true,
		"#!/usr/bin/env node\n// abkit-plugin: a plugin\n":            true,
		"#!/bin/sh\necho abkit-plugin\n":                              false,
		"#!/bin/sh\n# abkit-plugins are elsewhere\n":                  false,
		"#!/bin/sh\n" + strings.Repeat("\n", 20) + "# abkit-plugin\n": false,
	} {
		if got := hasMarker([]byte(head)); got != want {
			t.Errorf("hasMarker(%q) = %v, want %v", head, got, want)
		}
	}
}

// BenchmarkRecogniseBinary is the check a cold dir: listing makes before it
// starts a native executable, in its worst case: a 20 MB executable without
// the cookie, read to its end.
func BenchmarkRecogniseBinary(b *testing.B) {
	p := filepath.Join(b.TempDir(), "tool")
	bin := append([]byte{0x7f, 'E', 'L', 'F'}, make([]byte, 20<<20)...)
	if err := os.WriteFile(p, bin, 0o755); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(bin)))
	for b.Loop() {
		if ok, why, err := recognise(p); err != nil || ok {
			b.Fatal(why, err)
		}
	}
}
