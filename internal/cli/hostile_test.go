package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/replay/fixture"
)

// hostileMemory is the most a hostile input may make abctl allocate, in
// total over the whole run (so also a bound on the peak).
const hostileMemory = 256 << 20

// TestHostileInputs runs the hostile-input corpus (testdata/hostile, plus
// inputs too large to keep there, made here) through the commands that
// read them. Each must end with its documented error (docs/limits.md),
// exit 3, write nothing, and allocate under 256 MiB in total: before the
// limits, the 529-byte alias bomb took 2.1 GB and 100,000 '[' took 4 GB.
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	gen := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deep := gen("deep-100k.chain.yaml", "inbound: "+strings.Repeat("[", 100_000)+"\n")
	deepBlock := gen("deep-block-100k.chain.yaml", "inbound:\n  "+strings.Repeat("- ", 100_000)+"x\n")
	hugeLine := gen("huge-line.chain.yaml", "inbound: \""+strings.Repeat("x", 2<<20)+"\"\n")
	tokens := gen("tokens.catalog.yaml", "plugins: ["+strings.Repeat("1,", 1_000_000)+"1]\n")
	deepHAR := gen("deep-100k.har", `{"log":`+strings.Repeat("[", 100_000))
	fifo := filepath.Join(dir, "endless.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	h := func(name string) string { return filepath.Join("testdata", "hostile", name) }
	out := filepath.Join(dir, "out")

	tests := []struct {
		name string
		args []string
		want string // on stderr
		fifo bool   // feed the FIFO zeros until the reader goes away
	}{
		{"alias bomb", []string{"chain", "validate", h("alias-bomb.chain.yaml")}, "YAML node count after alias expansion is over the limit of 200000 nodes", false},
		{"alias doubling", []string{"chain", "validate", h("alias-doubling.chain.yaml")}, "YAML node count after alias expansion", false},
		{"alias bomb in a catalog", []string{"catalog", "list", "--source", "file:" + h("alias-bomb.chain.yaml")}, "YAML node count after alias expansion", false},
		{"deep flow", []string{"chain", "validate", h("deep-flow.chain.yaml")}, "YAML nesting depth is over the limit of 100 levels", false},
		{"deep block", []string{"chain", "validate", h("deep-block.chain.yaml")}, "YAML nesting depth", false},
		{"deep mapping", []string{"chain", "validate", h("deep-mapping.chain.yaml")}, "YAML nesting depth", false},
		{"100,000 [", []string{"chain", "validate", deep}, "YAML nesting depth", false},
		{"100,000 -", []string{"chain", "validate", deepBlock}, "YAML nesting depth", false},
		{"huge line", []string{"chain", "validate", hugeLine}, "chain file size is 2.0 MiB, over the limit of 1 MiB", false},
		{"a million tokens", []string{"catalog", "list", "--source", "file:" + tokens}, "YAML token count is 1000004 tokens, over the limit of 400000 tokens", false},
		{"chain /dev/zero", []string{"chain", "validate", "/dev/zero"}, "/dev/zero: chain file size is over the limit of 1 MiB", false},
		{"catalog /dev/zero", []string{"catalog", "list", "--source", "file:/dev/zero"}, "catalog file size is over the limit of 4 MiB", false},
		{"har /dev/zero", []string{"fixture", "import", "--har", "/dev/zero", "--out", out}, "HAR file size is over the limit of 64 MiB", false},
		{"fixture /dev/zero", []string{"fixture", "check", "/dev/zero"}, "fixture file size is over the limit", false},
		{"sse /dev/zero", []string{"fixture", "import", "--sse", "/dev/zero", "--out", filepath.Join(out, "x.fixture")}, "body file size is over the limit of 32 MiB", false},
		{"chain endless pipe", []string{"chain", "validate", fifo}, "chain file size is over the limit of 1 MiB", true},
		{"har endless pipe", []string{"fixture", "import", "--har", fifo, "--out", out}, "HAR file size is over the limit of 64 MiB", true},
		{"traversal method", []string{"fixture", "import", "--har", h("traversal-method.har"), "--out", out}, `request method "/../../../../tmp/x/PWNED": want an HTTP token`, false},
		{"NUL method", []string{"fixture", "import", "--har", h("nul-method.har"), "--out", out}, `request method "GET\x00": want an HTTP token`, false},
		{"300-byte method", []string{"fixture", "import", "--har", h("long-method.har"), "--out", out}, "want an HTTP token of at most 32 bytes", false},
		{"year 10000", []string{"fixture", "import", "--har", h("year-10000.har"), "--out", out}, "is in year 10000 (UTC); want a date in years 1-9999", false},
		{"deep HAR", []string{"fixture", "import", "--har", h("deep.har"), "--out", out}, "JSON nesting depth is over the limit of 200 levels", false},
		{"100,000-deep HAR", []string{"fixture", "import", "--har", deepHAR, "--out", out}, "JSON nesting depth", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stop := make(chan struct{})
			if tc.fifo {
				go feedZeros(fifo, stop)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			done := make(chan struct{})
			var code int
			var stdout, stderr string
			go func() {
				defer close(done)
				code, stdout, stderr = runAbctl(t, tc.args...)
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Minute): // hang guard only
				t.Fatal("no answer: the input was not bounded")
			}
			close(stop)
			runtime.ReadMemStats(&after)
			if code != ExitRead || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d; stderr %q\nwant %q", code, ExitRead, stderr, tc.want)
			}
			if tc.want != "" && !strings.Contains(stderr, "docs/limits.md") && !strings.Contains(tc.name, "method") && !strings.Contains(tc.name, "year") {
				t.Errorf("stderr %q does not point at docs/limits.md", stderr)
			}
			if stdout != "" && !strings.HasPrefix(tc.args[0], "chain") {
				t.Errorf("stdout %q", stdout)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > hostileMemory {
				t.Errorf("allocated %d MiB, over %d MiB", alloc>>20, hostileMemory>>20)
			} else {
				t.Logf("allocated %.1f MiB", float64(alloc)/(1<<20))
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("refused input wrote %d files into --out", len(ents))
			}
		})
	}
}

// feedZeros writes zeros into a FIFO until the reader closes it or stop.
func feedZeros(path string, stop chan struct{}) {
	fh, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer fh.Close()
	buf := make([]byte, 64<<10)
	for {
		select {
		case <-stop:
			return
		default:
		}
		if _, err := fh.Write(buf); err != nil {
			return
		}
	}
}

// TestRaiseLimits: a limit that is hit says which variable raises it, the
// input goes through with the variable set, and a variable set to
// nonsense is a usage error before anything runs (docs/limits.md).
func TestRaiseLimits(t *testing.T) {
	p := filepath.Join(t.TempDir(), "padded.chain.yaml")
	chain := "# " + strings.Repeat("x", 2<<20) + "\noutbound:\n  - name: a2a-parser\n"
	if err := os.WriteFile(p, []byte(chain), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runAbctl(t, "chain", "validate", p)
	if code != ExitRead || !strings.Contains(stderr, "chain file size is 2.0 MiB, over the limit of 1 MiB") ||
		!strings.Contains(stderr, "or raise the limit: ABKIT_MAX_CHAIN_FILE=3MiB") {
		t.Fatalf("exit %d, stderr %q; want exit 3 naming the limit and ABKIT_MAX_CHAIN_FILE=3MiB", code, stderr)
	}

	t.Setenv("ABKIT_MAX_CHAIN_FILE", "3MiB")
	if code, _, stderr := runAbctl(t, "chain", "validate", p); code != ExitOK {
		t.Errorf("with ABKIT_MAX_CHAIN_FILE=3MiB: exit %d, stderr %q", code, stderr)
	}

	t.Setenv("ABKIT_MAX_CHAIN_FILE", "3 megs")
	code, stdout, stderr := runAbctl(t, "chain", "validate", p)
	if code != ExitUsage || !strings.Contains(stderr, `ABKIT_MAX_CHAIN_FILE="3 megs": want a positive size`) || stdout != "" {
		t.Errorf("bad value: exit %d, stderr %q; want exit 2 naming the variable", code, stderr)
	}
}

// TestTooLargeBodyIsExit3: a body over the fixture limit is a resource
// limit like the others, exit 3, and says how to raise the limit.
func TestTooLargeBodyIsExit3(t *testing.T) {
	err := fmt.Errorf("x.fixture: %w", &fixture.TooLargeError{What: "response body", Size: 40 << 20})
	if code := ExitCode(err); code != ExitRead {
		t.Errorf("ExitCode = %d, want %d", code, ExitRead)
	}
	if !strings.Contains(err.Error(), "or raise the limit: ABKIT_MAX_BODY=50MiB") {
		t.Errorf("message %q does not say how to raise the limit", err)
	}
}
