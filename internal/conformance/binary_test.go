package conformance_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/testbin"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/broken"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/proctest"
)

// binDir holds the example plugin binaries and the broken ones (links of
// one binary, one name per broken plugin), built once in TestMain.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "abkit-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := 1
	if err := buildAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildAll(dir string) error {
	if err := testbin.Build(context.Background(), dir, "./examples/plugins/...", "./internal/conformance/testdata/broken"); err != nil {
		return fmt.Errorf("building the plugins: %w", err)
	}
	for name := range broken.Expect {
		if err := os.Link(filepath.Join(dir, "broken"), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return os.Remove(filepath.Join(dir, "broken"))
}

func exampleBinaries(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(binDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, isBroken := broken.Expect[e.Name()]; !isBroken {
			out = append(out, e.Name())
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d example binaries were built: %v", len(out), out)
	}
	return out
}

func failing(rep *conformance.Report) []string {
	var out []string
	for _, r := range rep.Results {
		if r.Status.Bad() {
			out = append(out, r.ID)
		}
	}
	sort.Strings(out)
	return out
}

func describeFailures(rep *conformance.Report) string {
	var b strings.Builder
	for _, r := range rep.Results {
		if r.Status.Bad() {
			fmt.Fprintf(&b, "\n%s:", r.ID)
			for _, f := range r.Failures {
				fmt.Fprintf(&b, "\n  %s", strings.ReplaceAll(f.String(), "\n", "\n  "))
			}
		}
	}
	return b.String()
}

// TestExampleBinariesPass runs the whole plugin suite over every example
// plugin binary, a fresh process per case.
func TestExampleBinariesPass(t *testing.T) {
	for _, name := range exampleBinaries(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep, err := conformance.Run(context.Background(), conformance.PluginSuite(),
				conformance.Binary(filepath.Join(binDir, name), hostGuard), conformance.Options{Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Errorf("%s fails %v:%s", name, failing(rep), describeFailures(rep))
			}
		})
	}
}

// TestBrokenBinariesFailExactly runs the suite over each broken plugin
// binary and checks that it fails exactly the cases citing the rule it
// breaks (P2, P5, P17, D9, D8, P28, P20 crash, P14 hang).
func TestBrokenBinariesFailExactly(t *testing.T) {
	for name, want := range broken.Expect {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep, err := conformance.Run(context.Background(), conformance.PluginSuite(),
				conformance.Binary(filepath.Join(binDir, name), hostGuard),
				// Broken plugins are written against abkit's alternatives.
				conformance.Options{Timeout: time.Minute, Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			got := failing(rep)
			want := slices.Sorted(slices.Values(want))
			if !slices.Equal(got, want) {
				t.Errorf("%s fails %v, want exactly %v:%s", name, got, want, describeFailures(rep))
			}
		})
	}
}

// TestBrokenInProcessFailExactly does the same in-process with poisoned
// frames, where P24 is observable.
func TestBrokenInProcessFailExactly(t *testing.T) {
	plugins := broken.Plugins(func() { panic("crash-mid-stream: dying on purpose") })
	for name, want := range broken.Expect {
		if w, ok := broken.ExpectInProcess[name]; ok {
			want = w
		}
		var skip []*regexp.Regexp
		for _, id := range broken.SkipInProcess[name] {
			skip = append(skip, regexp.MustCompile("^"+regexp.QuoteMeta(id)+"$"))
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep, err := conformance.Run(context.Background(), conformance.PluginSuite(), conformance.InProcess(plugins[name]),
				conformance.Options{Timeout: time.Minute, PoisonFrames: true, Skip: skip, Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			got := failing(rep)
			want := slices.Sorted(slices.Values(want))
			if !slices.Equal(got, want) {
				t.Errorf("%s fails %v, want exactly %v:%s", name, got, want, describeFailures(rep))
			}
		})
	}
}

// TestSlowFinishBinaryReportsP28 checks what a plugin author reads when
// OnFinish ignores its deadline across the process boundary (P28): the
// gRPC deadline fires before the runtime abandons the call, and the host
// adapter turns that into a failed call. Each finish case must report one
// P28 overrun, not a P30 panic, and stop at the first overrun rather than
// wait out every exchange's deadline.
func TestSlowFinishBinaryReportsP28(t *testing.T) {
	rep, err := conformance.Run(context.Background(), conformance.PluginSuite(),
		conformance.Binary(filepath.Join(binDir, "slow-finish"), hostGuard),
		conformance.Options{Timeout: time.Minute, Run: []*regexp.Regexp{regexp.MustCompile(`^P2[68]/finish/`)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 4 {
		t.Fatalf("got %d results, want the 4 finish cases", len(rep.Results))
	}
	for _, r := range rep.Results {
		if !r.Status.Bad() || len(r.Failures) == 0 {
			t.Errorf("%s: status %v, want a failure", r.ID, r.Status)
			continue
		}
		for _, f := range r.Failures {
			if f.Rule != "P28" || strings.Contains(f.Message, "panic") || !strings.Contains(f.Message, "deadline") {
				t.Errorf("%s: finding %q, want only a P28 deadline overrun", r.ID, f.String())
			}
		}
		if len(r.Failures) != 1 {
			t.Errorf("%s: %d findings, want the first overrun only:%s", r.ID, len(r.Failures), describeFailures(rep))
		}
	}
}

// TestDeadlineOverrunWording checks what a plugin author reads when a hook
// of a plugin process does not answer within the call timeout: each
// finding names the exchange and the call, the two identical overruns are
// one finding with a count, it says deadline overrun (not panicked), and
// go-plugin's debug log stays out of the report and the JUnit file unless
// DebugLog (conformance run -v) keeps it.
func TestDeadlineOverrunWording(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "slow-request")
	if err := os.Link(filepath.Join(binDir, "hang"), bin); err != nil { // the broken binary, named
		t.Fatal(err)
	}
	host := pluginhost.Options{StartTimeout: time.Minute, CallTimeout: 2 * time.Second}
	run := func(debugLog bool) *conformance.Report {
		rep, err := conformance.Run(context.Background(), conformance.PluginSuite(), conformance.Binary(bin, host),
			conformance.Options{Timeout: time.Minute, Run: []*regexp.Regexp{regexp.MustCompile(`^P15/hooks/legal-actions$`)}, DebugLog: debugLog})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 1 || rep.Results[0].Status != conformance.StatusFail {
			t.Fatalf("want one failed case:%s", describeFailures(rep))
		}
		return rep
	}
	rep := run(false)
	r := rep.Results[0]
	var ats []string
	for _, f := range r.Failures {
		if f.Rule != "P15" || !strings.HasPrefix(f.Message, "deadline overrun: no answer within the deadline (call timeout 2s)") {
			t.Errorf("finding %q, want a P15 deadline overrun", f.String())
		}
		ats = append(ats, f.At)
	}
	want := []string{"exchange 2 of 32 (mcp-json, not streamed), on_request", "exchange 5 of 32 (mcp, streamed, 2 frames), on_request",
		"exchange 8 of 32 (multiline-unterminated, streamed, 1 frame), on_request"}
	if !slices.Equal(ats, want) {
		t.Errorf("findings at %q, want %q", ats, want)
	}
	var text, junit strings.Builder
	if err := conformance.WriteText(&text, rep, false, false); err != nil {
		t.Fatal(err)
	}
	if err := conformance.WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"P15 (3 times): deadline overrun", "\n        at " + want[0] + "\n        at " + want[1] + "\n        at " + want[2] + "\n"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, text.String())
		}
	}
	for name, out := range map[string]string{"report": text.String(), "JUnit": junit.String()} {
		if strings.Contains(out, "panic") || strings.Contains(out, `@level`) {
			t.Errorf("%s says panic or carries go-plugin's debug log:\n%s", name, out)
		}
	}
	if r := run(true).Results[0]; !strings.Contains(r.Stderr, `"@level":"debug"`) {
		t.Errorf("with DebugLog the plugin's stderr lost go-plugin's debug lines: %q", r.Stderr)
	}
}

// hostGuard bounds handshakes and calls only against a hang: on a busy
// machine a healthy plugin took over 10 s to describe itself, and the
// verdicts must not change with the load. Cases about time carry their
// own deadlines.
var hostGuard = pluginhost.Options{StartTimeout: time.Minute, CallTimeout: time.Minute}

// A plugin that starts a helper process and exits normally when the suite
// stops it leaves no process behind: one run of the whole suite starts a
// fresh process per case (before, one run left 19 helpers running and
// reported all passed).
func TestForkingPluginLeavesNoChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process states need /proc")
	}
	pids := filepath.Join(t.TempDir(), "pids")
	opts := hostGuard
	opts.Env = []string{proctest.PidsEnv + "=" + pids}
	rep, err := conformance.Run(context.Background(), conformance.PluginSuite(),
		conformance.Binary(filepath.Join(binDir, "forks-child"), opts),
		conformance.Options{Isolation: conformance.IsolationCase})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("fails %v:%s", failing(rep), describeFailures(rep))
	}
	data, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	started := strings.Fields(string(data))
	if len(started) < 2 {
		t.Fatalf("only %d helpers started: the test plugin does not fork", len(started))
	}
	deadline := time.Now().Add(30 * time.Second) // hang guard, not a timing check
	for {
		var alive []string
		for _, pid := range started {
			if b, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil {
				if st := string(b); !strings.Contains(st[strings.LastIndexByte(st, ')'):], ") Z") {
					alive = append(alive, pid)
				}
			}
		}
		if len(alive) == 0 {
			t.Logf("%d helpers started, none left", len(started))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d helper processes left running: %v", len(alive), len(started), alive)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
