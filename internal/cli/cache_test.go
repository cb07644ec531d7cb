package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestCacheCleanAndNoCache: a dir: listing fills the description cache,
// --no-cache neither reads nor writes it, and `abctl cache clean` empties
// it and says how much it removed.
func TestCacheCleanAndNoCache(t *testing.T) {
	cache := t.TempDir()
	runWith := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		app := &App{Out: &out, Err: &errb, Catalog: CatalogOptions()}
		app.Catalog.CacheDir = cache
		return Main(context.Background(), app, args), out.String(), errb.String()
	}
	count := func() int {
		ents, _ := os.ReadDir(cache)
		return len(ents)
	}
	if code, _, errOut := runWith("--no-cache", "catalog", "list", "--source", "dir:"+binDir); code != 0 || count() != 0 {
		t.Fatalf("--no-cache: exit %d, %d cache files; %s", code, count(), errOut)
	}
	if code, _, errOut := runWith("catalog", "list", "--source", "dir:"+binDir); code != 0 || count() == 0 {
		t.Fatalf("list: exit %d, %d cache files; %s", code, count(), errOut)
	}
	n := count()
	code, _, errOut := runWith("cache", "clean")
	if code != 0 || count() != 0 || !strings.Contains(errOut, "removed ") || !strings.Contains(errOut, cache) {
		t.Fatalf("clean: exit %d, %d files left of %d; %s", code, count(), n, errOut)
	}
	if code, out, _ := runWith("cache", "clean", "-o", "json"); code != 0 || !strings.Contains(out, `"removed": 0`) {
		t.Fatalf("clean again: exit %d %s", code, out)
	}
}
