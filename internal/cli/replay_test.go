package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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

// A changed golden file makes replay exit 1 with a diff a person can act
// on; --update rewrites it (and reports only that file) and replay passes
// again.
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
	// The diff names the golden file's JSON keys and the event by seq,
	// hook and plugin, and ends with the command that accepts it.
	for _, want := range []string{
		`events seq 6 (on_response_frame, guardrail, frame 1) status: golden 403, now 451`,
		`accept the new trace: abctl replay --update ` + dir,
	} {
		if code != ExitFindings || !strings.Contains(out, want) {
			t.Fatalf("changed golden: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil || !bytes.Contains(x, []byte(`failures="1"`)) || !bytes.Contains(x, []byte(`tests="2"`)) {
		t.Fatalf("junit: %v\n%s", err, x)
	}
	// Every case and suite carries the time it took, measured.
	times := regexp.MustCompile(`<test(?:case|suite) [^>]*time="([0-9.]+)"`).FindAllSubmatch(x, -1)
	if len(times) != 3 {
		t.Fatalf("junit: %d time attributes, want 3 (a suite, 2 cases):\n%s", len(times), x)
	}
	for _, m := range times {
		if v, err := strconv.ParseFloat(string(m[1]), 64); err != nil || v <= 0 {
			t.Errorf("junit time %q is not a measured duration", m[1])
		}
	}
	// --update reports only the golden file it changed.
	if code, out, _ = runAbctl(t, "replay", "--update", dir); code != 0 || !strings.Contains(out, "updated "+g) ||
		strings.Contains(out, "chat-stream") || !strings.Contains(out, "1 golden file(s) changed") {
		t.Fatalf("update: exit %d\n%s", code, out)
	}
	if code, out, _ = runAbctl(t, "replay", "--update", dir); code != 0 || strings.Contains(out, "updated") || !strings.Contains(out, "0 golden file(s) changed") {
		t.Fatalf("update with nothing to change: exit %d\n%s", code, out)
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

// TestReplayFailsOnNothing: a suite without fixtures (with or without a
// chain), --fixtures on an empty directory, and a suite whose only
// fixture was renamed all fail, the last with an orphan golden.
func TestReplayFailsOnNothing(t *testing.T) {
	empty := t.TempDir()
	code, out, errOut := runAbctl(t, "replay", empty)
	if code != ExitFindings || !strings.Contains(errOut, "no fixtures in "+empty) {
		t.Errorf("empty suite: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runAbctl(t, "replay", "--chain", "../../fixtures/inference/chain.yaml", "--fixtures", empty, "--golden", filepath.Join(empty, "golden"), "-o", "json")
	if code != ExitFindings || !strings.Contains(errOut, "no fixtures in "+empty) || !strings.Contains(out, `"error": "no fixtures in `+empty+`"`) {
		t.Errorf("--fixtures on an empty directory: exit %d\n%s%s", code, out, errOut)
	}

	dir := t.TempDir()
	for _, f := range []string{"chain.yaml", "chat-stream.fixture"} {
		copyFile(t, filepath.Join("../../fixtures/inference", f), filepath.Join(dir, f))
	}
	if code, out, _ := runAbctl(t, "replay", "--update", dir); code != 0 {
		t.Fatalf("update: exit %d\n%s", code, out)
	}
	if err := os.Rename(filepath.Join(dir, "chat-stream.fixture"), filepath.Join(dir, "chat-stream.fixture.old")); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut = runAbctl(t, "replay", dir); code != ExitFindings || !strings.Contains(errOut, "no fixtures in "+dir) {
		t.Errorf("only fixture renamed away: exit %d\n%s%s", code, out, errOut)
	}
	if err := os.Rename(filepath.Join(dir, "chat-stream.fixture.old"), filepath.Join(dir, "renamed.fixture")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runAbctl(t, "replay", "--update", dir)
	orphan := filepath.Join(dir, "golden", "chat-stream.json")
	if code != ExitFindings || !strings.Contains(out, "ORPHAN "+orphan) || !strings.Contains(out, "orphan golden") {
		t.Errorf("renamed fixture: exit %d\n%s", code, out)
	}
}
