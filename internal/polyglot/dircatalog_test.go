package polyglot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	abctl "github.com/abkit/abkit/internal/cli"
	"github.com/abkit/abkit/internal/conformance/cli"
)

// TestInterpretedPluginsInDirCatalog puts real Python and TypeScript
// plugins in one dir: folder, as their authors would: scripts with the
// "abkit-plugin" marker line, and manifests (NAME.abkit.json) that name a
// command line. The helpers beside them are never run, a script a
// manifest names is listed once, and an edit to the .py a manifest starts
// is seen through the cache.
func TestInterpretedPluginsInDirCatalog(t *testing.T) {
	usePython(t, pythonWithGRPC(t))
	typescriptSDK(t)
	root := repoRoot(t)
	dir, cache := t.TempDir(), t.TempDir()
	link := func(lang, name, ext string) {
		t.Helper()
		if err := os.Symlink(filepath.Join(root, "examples", lang, name, name+ext), filepath.Join(dir, name+ext)); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link("python", "guardrail", ".py")       // marker, shebang
	link("typescript", "guardrail", ".js")   // marker, shebang
	link("python", "toolpolicy", ".py")      // also named by a manifest
	link("typescript", "passthrough", ".js") // named by a manifest only
	write("py-tools"+catalog.ManifestSuffix, `{"argv": ["python3", "toolpolicy.py"]}`, 0o644)
	write("ts-pass"+catalog.ManifestSuffix, `{"argv": ["node", "passthrough.js"]}`, 0o644)
	// A plugin started by its manifest, not executable itself, that the
	// test edits.
	plug := func(name string) string {
		return fmt.Sprintf(`import sys
sys.path.insert(0, %q)
import abkit
from abkit import gateway as gw
class P:
    def on_request(self, ctx, ex): return gw.proceed()
    def on_response(self, ctx, ex): return gw.proceed()
abkit.serve(abkit.Plugin(%q, "Lets every exchange through", pipeline=gw.Factory(lambda cfg: P())))
`, filepath.Join(root, "sdk", "python"), name)
	}
	edited := write("edited.py", plug("py-edited-1"), 0o644)
	write("edited"+catalog.ManifestSuffix, `{"argv": ["python3", "edited.py"]}`, 0o644)
	// Helpers that must not run: each would leave a mark.
	mark := filepath.Join(t.TempDir(), "ran")
	write("helper.sh", "#!/bin/sh\necho ran >> "+mark+"\n", 0o755)
	write("helper.py", "#!/usr/bin/env python3\nopen("+fmt.Sprintf("%q", mark)+", 'a').write('ran')\n", 0o755)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := catalog.Options{Describer: abctl.NewDescriber(), CacheDir: cache}
	load := func() *catalog.Catalog {
		t.Helper()
		cat, err := catalog.Load(ctx, []string{"dir:" + dir}, opts)
		if err != nil {
			t.Fatalf("dir:%s: %v", dir, err)
		}
		return cat
	}
	cat := load()
	want := "py-edited-1,py-guardrail,py-tool-policy,ts-guardrail,ts-pass-through"
	if got := strings.Join(cat.Names(), ","); got != want {
		t.Fatalf("names = %s, want %s; notes %v", got, want, cat.Notes)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("a helper script was run")
	}
	for _, n := range cat.Notes {
		if strings.HasSuffix(n.Path, "toolpolicy.py") || strings.HasSuffix(n.Path, "passthrough.js") {
			t.Errorf("a manifest's script is listed on its own: %v", n)
		}
	}
	d, _ := cat.Lookup("py-tool-policy")
	if len(d.Origin.Argv) != 2 || d.Origin.Argv[1] != "toolpolicy.py" || d.Origin.Dir != dir {
		t.Errorf("py-tool-policy origin = %+v, want the manifest's command line run in %s", d.Origin, dir)
	}

	// The edit is seen without --no-cache; the rest comes from the cache.
	if err := os.WriteFile(edited, []byte(plug("py-edited-2")), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	os.Chtimes(edited, future, future)
	cat = load()
	if _, ok := cat.Lookup("py-edited-2"); !ok {
		t.Errorf("after editing edited.py: %v, want py-edited-2", cat.Names())
	}

	// conformance and abctl take the manifest too.
	var out, errb bytes.Buffer
	rootCmd := cli.NewRoot(&cli.App{Out: &out, Err: &errb})
	rootCmd.SetArgs([]string{"run", "--plugin", filepath.Join(dir, "ts-pass"+catalog.ManifestSuffix), "--isolation", "suite"})
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&errb)
	if err := rootCmd.ExecuteContext(ctx); err != nil || !strings.Contains(out.String(), "0 failed") {
		t.Errorf("conformance run --plugin ts-pass.abkit.json: %v\n%s%s", err, out.String(), errb.String())
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("a helper script was run")
	}

	// dryrun --plugin-dir DIR runs a chain entry from DIR/NAME.abkit.json.
	chain := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(chain, []byte("outbound:\n  - name: py-edited-2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write("py-edited-2"+catalog.ManifestSuffix, `{"argv": ["python3", "edited.py"]}`, 0o644)
	var dout, derr bytes.Buffer
	code := abctl.Main(ctx, &abctl.App{Out: &dout, Err: &derr, Catalog: abctl.CatalogOptions()},
		[]string{"dryrun", "--chain", chain, filepath.Join(root, "fixtures", "inference", "chat-stream.fixture"), "--plugin-dir", dir})
	if code != 0 {
		t.Errorf("dryrun --plugin-dir with a manifest: exit %d\n%s%s", code, dout.String(), derr.String())
	}
}
