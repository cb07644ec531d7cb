package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/catalog"
)

func runAbctl(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	app := &App{Out: &o, Err: &e, Catalog: catalog.Options{Builtin: Builtins, CacheDir: "-"}, Version: "test"}
	code = Main(context.Background(), app, args)
	return code, o.String(), e.String()
}

// TestCorpusReplay is `make replay` inside `make test`: every fixture under
// fixtures/ replays to its golden trace, also rechunked (P19, P21, P22).
func TestCorpusReplay(t *testing.T) {
	suites, err := filepath.Glob("../../fixtures/*/chain.yaml")
	if err != nil || len(suites) < 4 {
		t.Fatalf("want at least 4 suites under fixtures/, got %v (%v)", suites, err)
	}
	args := []string{"replay", "--rechunk"}
	for _, s := range suites {
		args = append(args, filepath.Dir(s))
	}
	code, out, errOut := runAbctl(t, args...)
	if code != 0 {
		t.Fatalf("replay exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "FAIL") || !strings.Contains(out, " 0 failed") {
		t.Fatalf("unexpected output:\n%s", out)
	}
}

// A changed golden file makes replay exit 1 with a go-cmp diff; --update
// rewrites it and replay passes again.
func TestReplayDiffAndUpdate(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"chain.yaml", "mid-stream-reject.fixture", "chat-stream.fixture"} {
		copyFile(t, filepath.Join("../../fixtures/inference", f), filepath.Join(dir, f))
	}
	code, out, _ := runAbctl(t, "replay", dir)
	if code != ExitFindings || !strings.Contains(out, "run with --update") {
		t.Fatalf("missing golden: exit %d\n%s", code, out)
	}
	if code, out, _ = runAbctl(t, "replay", "--update", dir); code != 0 {
		t.Fatalf("update: exit %d\n%s", code, out)
	}
	g := filepath.Join(dir, "golden", "mid-stream-reject.json")
	data, _ := os.ReadFile(g)
	os.WriteFile(g, bytes.Replace(data, []byte(`"status":451`), []byte(`"status":403`), 1), 0o644)
	junit := filepath.Join(dir, "out.xml")
	code, out, _ = runAbctl(t, "replay", "--junit", junit, dir)
	if code != ExitFindings || !strings.Contains(out, "-golden +got") || !strings.Contains(out, "451") {
		t.Fatalf("changed golden: exit %d\n%s", code, out)
	}
	x, err := os.ReadFile(junit)
	if err != nil || !bytes.Contains(x, []byte(`failures="1"`)) || !bytes.Contains(x, []byte(`tests="2"`)) {
		t.Fatalf("junit: %v\n%s", err, x)
	}
	if code, out, _ = runAbctl(t, "replay", "--update", dir); code != 0 {
		t.Fatalf("update: exit %d\n%s", code, out)
	}
	if code, out, _ = runAbctl(t, "replay", "--shard", "1/2", dir); code != 0 {
		t.Fatalf("shard: exit %d\n%s", code, out)
	}
	_, out1, _ := runAbctl(t, "replay", "--shard", "1/2", dir)
	_, out2, _ := runAbctl(t, "replay", "--shard", "2/2", dir)
	if strings.Count(out1+out2, "ok ") != 2 {
		t.Fatalf("shards do not partition the corpus:\n%s\n%s", out1, out2)
	}
	if code, _, _ = runAbctl(t, "replay", "--shard", "3/2", dir); code != ExitUsage {
		t.Fatalf("bad shard: exit %d", code)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
