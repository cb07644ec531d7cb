package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/internal/testbin"

	"github.com/google/go-cmp/cmp"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/proctest"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// binDir holds the example plugin binaries, built once in TestMain, plus
// slowPlugin: a copy of this test binary that serves a slow plugin.
var binDir string

const (
	// slowPlugin is the file name under which this test binary serves a
	// plugin that takes 5 ms per frame, so a run can be interrupted.
	slowPlugin = "slow-frames"
	// abctlEnv makes this test binary run abctl itself, with SIGINT wired
	// as in cmd/abctl and without built-in plugins.
	abctlEnv = "ABKIT_CLI_TEST_ABCTL"
)

func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case slowPlugin:
		sdk.Serve(slowBundle())
		return
	case forkerPlugin:
		serveForker()
		return
	case hangPlugin:
		sdk.Serve(hangBundle())
		return
	case sessionForker:
		serveSessionForker()
		return
	}
	if os.Getenv(abctlEnv) == "1" {
		// As cmd/abctl runs, with a call timeout far beyond any test, so
		// that only the signal handling can end a hung call.
		// The describe bound too: 16 -race copies starting at once on a
		// loaded machine overran the 5 s default.
		app := &App{Out: os.Stdout, Err: os.Stderr, Catalog: catalog.Options{Builtin: Builtins, CacheDir: "-", Describer: NewDescriber(), DescribeTimeout: time.Minute},
			Pipeline:   func() []gateway.Factory { return nil },
			PluginHost: pluginhost.Options{CallTimeout: 10 * time.Minute}}
		if g := os.Getenv(graceEnv); g != "" {
			app.InterruptGrace, _ = time.ParseDuration(g)
		}
		os.Exit(MainWithSignals(app, os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "abkit-cli-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	err = testbin.Build(context.Background(), dir, "./examples/plugins/...")
	for _, name := range []string{slowPlugin, forkerPlugin, hangPlugin} {
		if err == nil {
			err = copyExec(os.Args[0], filepath.Join(dir, name))
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the example plugins: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func copyExec(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// slowFrames is a streaming plugin that takes 5 ms per frame.
type slowFrames struct{}

func (slowFrames) Name() string { return slowPlugin }
func (slowFrames) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Takes 5 ms per frame so a test can interrupt a run"}
}
func (slowFrames) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (slowFrames) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (slowFrames) OnResponseFrame(context.Context, *gateway.Exchange, []byte, bool) gateway.Action {
	time.Sleep(5 * time.Millisecond)
	return gateway.Continue()
}

func slowBundle() sdk.Plugin {
	return sdk.Plugin{Name: slowPlugin, Description: "Takes 5 ms per frame so a test can interrupt a run",
		Pipeline: &gateway.Factory{Name: slowPlugin, New: func(json.RawMessage) (gateway.Plugin, error) { return slowFrames{}, nil }}}
}

// pluginProcs lists the live processes running a binary from dir, whoever
// their parent is now: a leaked plugin is reparented when abctl exits.
func pluginProcs(t testing.TB, dir string) []string {
	t.Helper()
	skipNoProcs(t)
	return proctest.List(dir)
}

func skipNoProcs(t testing.TB) {
	t.Helper()
	if !proctest.Supported() {
		t.Skip("process listing needs /proc")
	}
}

// runApp runs abctl in-process with the given in-process plugins.
func runApp(ctx context.Context, pipeline []gateway.Factory, args ...string) (code int, out, errOut string) {
	var o, e bytes.Buffer
	app := &App{Out: &o, Err: &e, Catalog: catalog.Options{Builtin: Builtins, CacheDir: "-"},
		Pipeline: func() []gateway.Factory { return pipeline }}
	code = Main(ctx, app, args)
	return code, o.String(), e.String()
}

func decodeReport(t *testing.T, out string) replay.Report {
	t.Helper()
	var rep replay.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	for i := range rep.Events {
		rep.Events[i].DurationNS = 0
	}
	return rep
}

// TestDryrunPluginDirSameTrace runs fixtures through a chain whose plugins
// all come from the example binaries (no built-in plugin at all), and
// through the same plugins in-process: the traces are the same, durations
// aside, and no plugin process outlives the run (P19, P21).
func TestDryrunPluginDirSameTrace(t *testing.T) {
	for _, fx := range []string{"chat-stream", "messages-stream", "mid-stream-reject", "cut-mid-event", "json-completion", "upstream-503"} {
		t.Run(fx, func(t *testing.T) {
			args := []string{"dryrun", "--chain", "../../fixtures/inference/chain.yaml", "../../fixtures/inference/" + fx + ".fixture", "-o", "json"}
			code, in, errIn := runApp(context.Background(), PipelineFactories(), args...)
			if code != 0 {
				t.Fatalf("in-process: exit %d: %s", code, errIn)
			}
			code, bin, errBin := runApp(context.Background(), nil, append(args, "--plugin-dir", binDir)...)
			if code != 0 {
				t.Fatalf("--plugin-dir: exit %d: %s", code, errBin)
			}
			want, got := decodeReport(t, in), decodeReport(t, bin)
			if len(got.Events) == 0 {
				t.Fatal("no events")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("trace through binaries differs (-in-process +binaries):\n%s", diff)
			}
			if left := pluginProcs(t, binDir); len(left) > 0 {
				t.Errorf("plugin processes left: %v", left)
			}
		})
	}
}

// TestDryrunPluginDirErrors: a missing binary, a binary that names itself
// differently and a chain that fails to build after its plugins loaded all
// exit 3 with the entry named, and leave no plugin process.
func TestDryrunPluginDirErrors(t *testing.T) {
	dir := t.TempDir()
	if err := copyExec(filepath.Join(binDir, "guardrail"), filepath.Join(dir, "audit-log")); err != nil {
		t.Fatal(err)
	}
	if err := copyExec(filepath.Join(binDir, "guardrail"), filepath.Join(dir, "guardrail")); err != nil {
		t.Fatal(err)
	}
	if err := copyExec(filepath.Join(binDir, "inference-parser"), filepath.Join(dir, "inference-parser")); err != nil {
		t.Fatal(err)
	}
	badConfig := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(badConfig, []byte("outbound:\n  - name: inference-parser\n  - name: guardrail\n    config: {phrases: 7}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fx := "../../fixtures/inference/chat-stream.fixture"
	for _, tc := range []struct {
		name, chain, dir, want string
	}{
		{"missing", "../../fixtures/inference/chain.yaml", t.TempDir(), `chain entry "inference-parser": not built in and no binary`},
		{"misnamed", "../../fixtures/inference/chain.yaml", dir, `chain entry "audit-log": binary ` + filepath.Join(dir, "audit-log") + ` describes itself as "guardrail"`},
		{"bad config", badConfig, dir, "guardrail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runApp(context.Background(), nil, "dryrun", "--chain", tc.chain, fx, "--plugin-dir", tc.dir)
			if code != ExitRead || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 3 and %q", code, errOut, tc.want)
			}
			if left := pluginProcs(t, tc.dir); len(left) > 0 {
				t.Errorf("plugin processes left: %v", left)
			}
		})
	}
}

// TestWithPluginsPanic: a panic while the chain runs still stops the
// plugin processes.
func TestWithPluginsPanic(t *testing.T) {
	var e bytes.Buffer
	app := &App{Out: &e, Err: &e, Pipeline: func() []gateway.Factory { return nil }}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		_ = withPlugins(context.Background(), app, binDir, []string{"inference-parser", "guardrail"}, func(fs []gateway.Factory) error {
			if len(fs) != 2 || len(pluginProcs(t, binDir)) != 2 {
				t.Errorf("factories %d, processes %v; want 2 running plugins", len(fs), pluginProcs(t, binDir))
			}
			panic("boom")
		})
	}()
	if left := pluginProcs(t, binDir); len(left) > 0 {
		t.Errorf("plugin processes left after a panic: %v", left)
	}
}

// TestDryrunPluginDirSIGINT sends SIGINT to abctl (this test binary in
// abctl mode) while a plugin binary is streaming the 10,000-event fixture
// at 5 ms a frame: abctl ends promptly and no plugin process is left.
func TestDryrunPluginDirSIGINT(t *testing.T) {
	chain := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(chain, []byte("outbound:\n  - name: "+slowPlugin+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "dryrun", "--chain", chain, "../../fixtures/bigstream/10k-events.fixture", "--plugin-dir", binDir)
	cmd.Env = append(os.Environ(), abctlEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The plugin's process appearing is the event that ends the wait; the
	// 60 s bound is only a hang guard (a busy machine took over 10 s to
	// start abctl and its plugin).
	deadline := time.Now().Add(60 * time.Second)
	for len(pluginProcs(t, binDir)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the plugin never started: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// No sleep "into the stream": SIGINT at any point after the plugin
	// started must interrupt the run, and the stream lasts 50 s (10,000
	// frames at 5 ms), so a run that ignored SIGINT exits 0 and fails below.
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := cmd.ProcessState.ExitCode(); code == 0 {
			t.Errorf("abctl exited 0 after SIGINT (err %v); want a failure", err)
		}
	case <-time.After(2 * time.Minute): // hang guard only
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		t.Fatalf("abctl still running 2 min after SIGINT: %s", stderr.String())
	}
	t.Logf("abctl ended %s after SIGINT: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr %q does not say the run was interrupted", stderr.String())
	}
	if left := pluginProcs(t, binDir); len(left) > 0 {
		t.Errorf("plugin processes left after SIGINT: %v", left)
	}
}

// TestCatalogListDir: abctl's own catalog options describe a dir: source
// through the plugin host.
func TestCatalogListDir(t *testing.T) {
	opts := CatalogOptions()
	opts.CacheDir = t.TempDir()
	var o, e bytes.Buffer
	app := &App{Out: &o, Err: &e, Catalog: opts}
	if code := Main(context.Background(), app, []string{"catalog", "list", "--source", "dir:" + binDir, "-o", "json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	var got struct {
		Plugins []catalog.Descriptor `json:"plugins"`
	}
	if err := json.Unmarshal(o.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, o.String())
	}
	names := map[string]string{}
	for _, d := range got.Plugins {
		names[d.Name] = d.Origin.Path
	}
	for _, n := range []string{"guardrail", "inference-parser", slowPlugin} {
		if names[n] != filepath.Join(binDir, n) {
			t.Errorf("%s: listed from %q, want %s (all: %v)", n, names[n], filepath.Join(binDir, n), names)
		}
	}
	if left := pluginProcs(t, binDir); len(left) > 0 {
		t.Errorf("plugin processes left: %v", left)
	}
}

// TestPreferDir: a --plugin-dir binary named as a built-in plugin is not
// shadowed silently. Without --prefer-dir the built-in runs and a note
// names the binary left unstarted; with it the binary runs instead.
func TestPreferDir(t *testing.T) {
	builtin := guardrail.Factory()
	for _, prefer := range []bool{false, true} {
		t.Run(fmt.Sprintf("prefer=%v", prefer), func(t *testing.T) {
			var e bytes.Buffer
			o := &globalOpts{app: &App{Out: &e, Err: &e, Pipeline: func() []gateway.Factory { return []gateway.Factory{builtin} }}}
			err := withPluginDir(context.Background(), o, pluginDirOpts{dir: binDir, prefer: prefer}, []chainPlugin{{name: "guardrail"}}, func(fs []gateway.Factory) error {
				procs := pluginProcs(t, binDir)
				if len(fs) != 1 || fs[0].Name != "guardrail" {
					t.Fatalf("factories %v, want the one guardrail", fs)
				}
				if want := map[bool]int{false: 0, true: 1}[prefer]; len(procs) != want {
					t.Errorf("plugin processes %v, want %d", procs, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := "runs the built-in plugin; " + filepath.Join(binDir, "guardrail") + " has its name and is not started (--prefer-dir runs it)"
			if prefer {
				want = "runs " + filepath.Join(binDir, "guardrail") + ", not the built-in plugin (--prefer-dir)"
			}
			if !strings.Contains(e.String(), want) {
				t.Errorf("stderr %q, want it to say %q", e.String(), want)
			}
		})
	}
}

// TestEntrySource: a chain entry's source: picks the built-in or the
// --plugin-dir binary of one name, over --prefer-dir either way, and a
// source the run cannot honour is refused with the entry's file:line.
func TestEntrySource(t *testing.T) {
	builtin := guardrail.Factory()
	bin := filepath.Join(binDir, "guardrail")
	tests := []struct {
		name   string
		source string
		opts   pluginDirOpts
		procs  int    // plugin processes started
		note   string // on stderr
		err    string // the error, when refused
	}{
		{"dir over builtin", catalog.SourceDir, pluginDirOpts{dir: binDir}, 1, "runs " + bin + ", not the built-in plugin (source: dir)", ""},
		{"builtin over prefer-dir", catalog.SourceBuiltin, pluginDirOpts{dir: binDir, prefer: true}, 0, "", ""},
		{"dir without plugin-dir", catalog.SourceDir, pluginDirOpts{}, 0, "", `chain.yaml:4: chain entry "guardrail": source: dir runs the binary of --plugin-dir, and none is given`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e bytes.Buffer
			o := &globalOpts{app: &App{Out: &e, Err: &e, Pipeline: func() []gateway.Factory { return []gateway.Factory{builtin} }}}
			plugins := []chainPlugin{{name: "guardrail", source: tc.source, at: "chain.yaml:4"}}
			ran := false
			err := withPluginDir(context.Background(), o, tc.opts, plugins, func(fs []gateway.Factory) error {
				ran = true
				if len(fs) != 1 || fs[0].Name != "guardrail" {
					t.Fatalf("factories %v, want the one guardrail", fs)
				}
				if procs := pluginProcs(t, binDir); len(procs) != tc.procs {
					t.Errorf("plugin processes %v, want %d", procs, tc.procs)
				}
				return nil
			})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || ran {
					t.Fatalf("err %v (ran %v), want one saying %q and no run", err, ran, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(e.String(), tc.note) || (tc.note == "" && e.Len() > 0) {
				t.Errorf("stderr %q, want %q", e.String(), tc.note)
			}
		})
	}
	t.Run("builtin unknown", func(t *testing.T) {
		o := &globalOpts{app: &App{Out: io.Discard, Err: io.Discard, Pipeline: func() []gateway.Factory { return nil }}}
		err := withPluginDir(context.Background(), o, pluginDirOpts{dir: binDir}, []chainPlugin{{name: "guardrail", source: catalog.SourceBuiltin, at: "c.yaml:2"}}, func([]gateway.Factory) error {
			t.Fatal("ran")
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), `c.yaml:2: chain entry "guardrail": source: builtin, but abctl has no built-in plugin of that name`) {
			t.Fatalf("err %v", err)
		}
	})
}
