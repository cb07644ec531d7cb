package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/proctest"
	"github.com/abkit/abkit/internal/testbin"
)

// bin holds the binaries the tests need, built once: the reference runtime,
// one broken runtime and a plugin binary (the plugin suite's broken plugin, as a wrong runtime). The self-test of
// every implementation is runtimesuite's TestSelftest; here only the
// command's contract is tested, on a small set.
var bin string

// conformanceEnv makes this test binary run conformance itself, as
// cmd/conformance does (signals included).
const conformanceEnv = "ABKIT_CONFORMANCE_CLI_TEST_MAIN"

func TestMain(m *testing.M) {
	// By name first: a runtime conformance starts inherits conformanceEnv.
	if filepath.Base(os.Args[0]) == sessionRuntime {
		serveSessionRuntime()
	}
	if os.Getenv(conformanceEnv) == "1" {
		os.Exit(MainWithSignals(&App{Out: os.Stdout, Err: os.Stderr}, os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "abkit-conformance-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	code := 1
	err = testbin.Build(context.Background(), dir, "./cmd/abkit-runtime", "./internal/refruntime/brokenruntime", "./internal/conformance/testdata/broken")
	if err == nil {
		// The broken plugins and the broken runtimes pick their behaviour
		// by name.
		for _, l := range [][2]string{{"broken", "hang"}, {"broken", "forks-child"}, {"broken", "forks-session"}, {"broken", "escape-stdout"}, {"broken", "escape-panic"}, {"brokenruntime", "fifo-finish"}} {
			if err == nil {
				err = os.Link(filepath.Join(dir, l[0]), filepath.Join(dir, l[1]))
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), &App{Out: &out, Err: &errb}, args)
	// A run stops every process it started before it returns (what it
	// kills may take a moment to go).
	if proctest.Supported() {
		if left := proctest.WaitGone(bin); len(left) > 0 {
			proctest.KillAll(left)
			t.Errorf("conformance %v returned with processes left running: %v", args, left)
		}
	}
	return code, out.String(), errb.String()
}

// TestRunRuntimeExitCodes: 0 for the reference runtime, 1 for a broken one
// (fifo-finish breaks P27), 3 for a plugin binary given as a runtime (the
// runtime handshake fails) and for a missing binary.
func TestRunRuntimeExitCodes(t *testing.T) {
	for _, c := range []struct {
		name, bin string
		code      int
		want      string // in stdout, or stderr for exit 3
	}{
		{"reference", "abkit-runtime", ExitOK, "0 failed"},
		{"broken-P27", "fifo-finish", ExitFail, "P15/order/6-plugins/allow"},
		{"plugin-as-runtime", "broken", ExitLoad, "runtime handshake"},
		{"missing", "no-such-binary", ExitLoad, "no-such-binary"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(t, "run", "--runtime", filepath.Join(bin, c.bin), "--isolation", "suite", "--run", "^P15/order/6-plugins/allow$", "--run", "^D", "--timeout", "20s")
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
			where := out
			if c.code == ExitLoad {
				where = errs
			}
			if !strings.Contains(where, c.want) {
				t.Errorf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", c.want, out, errs)
			}
		})
	}
}

// TestRunRuntimeUsage: --runtime with --plugin is a usage error.
func TestRunRuntimeUsage(t *testing.T) {
	if code, _, errs := run(t, "run", "--runtime", "x", "--plugin", "y"); code != ExitUsage || !strings.Contains(errs, "exactly one") {
		t.Errorf("exit %d, stderr %q; want 2 naming the conflict", code, errs)
	}
}

// TestListRuntimeRules: the runtime suite's coverage table has no GAP row
// and states its own reasons (P24), not the plugin suite's; P1 is checked
// by the runtime's build cases, not left to plugins.
func TestListRuntimeRules(t *testing.T) {
	code, out, _ := run(t, "list", "--suite", "runtime", "--rules")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(out, "GAP") || strings.Count(out, "\n")-strings.Count(out, "\n     ") != 62 {
		t.Errorf("want 62 rule rows (P1-P36, D1-D20, H1-H6), no GAP:\n%s", out)
	}
	for _, want := range []string{"P24  rule   not checked: owed by plugins", "P4   rule   P4/normalise/write-implies-read", "D1   rule   D1/points/",
		"P1   rule   P1/repeated-name/both-run, P1/repeated-name/refused-or-both-run, P6/build/P1-accept-names-differ-in-case, P6/build/P1-all-errors, P6/build/P1-duplicate-name, P6/build/P1-empty-name\n",
		"     choice P15.reject-status: a rejection status outside 400–599\n",
		"            abkit   remap-403: replaced by 403, with a warning [the rule's cases follow it]\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// TestSelftestTable: with the reference and a broken runtime the table
// lists both as expected and the command exits 0; a reference binary
// posing as the broken fifo-finish is a miss (P27 not caught) and exit 1.
func TestSelftestTable(t *testing.T) {
	good := t.TempDir()
	for _, n := range []string{"abkit-runtime", "fifo-finish"} {
		if err := os.Link(filepath.Join(bin, n), filepath.Join(good, n)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := run(t, "selftest", "--bin", good)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "IMPLEMENTATION") || !strings.Contains(lines[0], "CAUGHT BY") {
		t.Fatalf("no table:\n%s", out)
	}
	if f := strings.Fields(lines[1]); len(f) < 5 || f[0] != "abkit-runtime" || f[2] != "pass" || f[len(f)-1] != "ok" {
		t.Errorf("reference row %q", lines[1])
	}
	if f := strings.Fields(lines[2]); len(f) < 5 || f[0] != "fifo-finish" || f[2] != "P27" || !strings.Contains(lines[2], "P15/order/") || f[len(f)-1] != "ok" {
		t.Errorf("broken row %q", lines[2])
	}
	if !strings.Contains(out, "2 implementations, all as expected") {
		t.Errorf("no summary line:\n%s", out)
	}

	bad := t.TempDir()
	if err := os.Link(filepath.Join(bin, "abkit-runtime"), filepath.Join(bad, "fifo-finish")); err != nil {
		t.Fatal(err)
	}
	code, out, errs = run(t, "selftest", "--bin", bad)
	if code != ExitFail || !strings.Contains(out, "MISS: not caught by a case citing P27") {
		t.Errorf("exit %d, want 1 with a MISS row\n%s\n%s", code, out, errs)
	}
	if code, _, errs := run(t, "selftest", "--bin", t.TempDir()); code != ExitUsage || !strings.Contains(errs, "no implementations") {
		t.Errorf("empty --bin dir: exit %d, stderr %q; want 2", code, errs)
	}
}

// TestExplainBothSuites: explain finds runtime-suite cases and names the
// suite of the case it explains; an ID in both suites is explained once per
// suite; an unknown ID is a usage error (exit 2) that offers near IDs with
// their suite, or the list commands when nothing is near.
func TestExplainBothSuites(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
		out  []string // in stdout, or stderr for exit 2
		not  []string
	}{
		{"runtime-case", []string{"explain", "P15/order/6-plugins/allow"}, ExitOK,
			[]string{"P15/order/6-plugins/allow\nsuite: runtime\nrules: P15, P16, P26, P27\n", "OnFinish in reverse order"}, []string{"suite: plugin"}},
		{"plugin-case", []string{"explain", "P21/last-exactly-once/zero-frames"}, ExitOK,
			[]string{"suite: plugin\nrules: P21"}, []string{"suite: runtime"}},
		{"in-both", []string{"explain", "P17/body-write/declared-only"}, ExitOK,
			[]string{"suite: plugin", "suite: runtime"}, nil},
		{"unknown-near", []string{"explain", "P15/order/7-plugins/allow"}, ExitUsage,
			[]string{`no case "P15/order/7-plugins/allow" in the plugin or runtime suite`, "did you mean: ", "(runtime)"}, nil},
		{"unknown-far", []string{"explain", "Z9/no-such-case"}, ExitUsage,
			[]string{`no case "Z9/no-such-case"`, "run 'conformance list --suite plugin' or 'conformance list --suite runtime'"}, []string{"did you mean"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
			where := out
			if code == ExitUsage {
				where = errs
			}
			for _, w := range c.out {
				if !strings.Contains(where, w) {
					t.Errorf("no %q in:\n%s", w, where)
				}
			}
			for _, w := range c.not {
				if strings.Contains(where, w) {
					t.Errorf("unexpected %q in:\n%s", w, where)
				}
			}
		})
	}
}

// TestVersion: --version and the version command name the version and
// the commit, the same way, and -o json carries the same fields.
func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	app := &App{Out: &out, Err: &errb, Version: "v1.2.3", Commit: "0123456789abcdef0123"}
	if code := Main(context.Background(), app, []string{"--version"}); code != ExitOK {
		t.Fatalf("--version exit %d: %s", code, errb.String())
	}
	flag := out.String()
	out.Reset()
	if code := Main(context.Background(), app, []string{"version"}); code != ExitOK {
		t.Fatalf("version exit %d: %s", code, errb.String())
	}
	if flag != out.String() || !strings.HasPrefix(flag, "conformance v1.2.3 (commit 0123456789ab, ") {
		t.Errorf("--version %q, version %q", flag, out.String())
	}
	out.Reset()
	if code := Main(context.Background(), app, []string{"version", "-o", "json"}); code != ExitOK {
		t.Fatalf("version -o json exit %d: %s", code, errb.String())
	}
	var v struct{ Version, Commit, Go string }
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Version != "v1.2.3" || v.Commit != "0123456789abcdef0123" || v.Go == "" {
		t.Errorf("version -o json = %+v (%v) from %q", v, err, out.String())
	}
}

// TestLimitVariableChecked: a limit variable set to nonsense is a usage
// error naming it, before anything runs (docs/limits.md).
func TestLimitVariableChecked(t *testing.T) {
	t.Setenv("ABKIT_MAX_BASELINE_FILE", "big")
	code, out, errOut := run(t, "list")
	if code != ExitUsage || !strings.Contains(errOut, `ABKIT_MAX_BASELINE_FILE="big"`) || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming the variable", code, out, errOut)
	}
}
