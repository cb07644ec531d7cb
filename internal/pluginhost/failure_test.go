package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/sdk/gateway"
)

// gone reports whether pid no longer exists (exited and reaped).
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func helperOpts(mode string) pluginhost.Options {
	return pluginhost.Options{StartTimeout: 2 * time.Second, CallTimeout: 500 * time.Millisecond,
		Env: []string{helperEnv + "=" + mode}}
}

// A binary that is not an abkit plugin gives a *LoadError wrapping
// ErrNotPlugin (ErrStartTimeout when it is only silent), and its process is
// reaped. ErrNotPlugin is itself the proof that Load did not wait out the
// start timeout (that would be ErrStartTimeout), so no wall-clock bound is
// asserted: a busy machine only slows the answer. The minute is a hang
// guard.
func TestLoadNotAPlugin(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		mode, want string
		sentinel   error
	}{
		// Silence past the start timeout is slow, not proven foreign: the
		// catalog must not cache it as "not a plugin" (ErrStartTimeout).
		{"no-handshake", "the plugin did not start in time: no handshake within 2s", pluginhost.ErrStartTimeout},
		{"garbage", "Unrecognized remote plugin message: hello, I am not a plugin", pluginhost.ErrNotPlugin},
		{"wrong-cookie", "These are not meant to be executed directly", pluginhost.ErrNotPlugin},
		{"wrong-version", "incompatible API version with plugin. Plugin version: 7, Client versions: [1]", pluginhost.ErrNotPlugin},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			t0 := time.Now()
			p, err := pluginhost.Load(context.Background(), self, helperOpts(c.mode))
			took := time.Since(t0)
			if err == nil {
				p.Close()
				t.Fatal("loaded a binary that is not an abkit plugin")
			}
			var le *pluginhost.LoadError
			if !errors.As(err, &le) || !errors.Is(err, c.sentinel) {
				t.Fatalf("error %T %v: want a *LoadError wrapping %v", err, err, c.sentinel)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "is not a working abkit plugin") {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
			if took > time.Minute {
				t.Fatalf("took %v: Load hung", took)
			}
			if le.Pid == 0 || !gone(le.Pid) {
				t.Fatalf("process %d is still there", le.Pid)
			}
		})
	}
}

func loadHelper(t *testing.T, mode string) (*pluginhost.Plugin, *pipeline.Chain) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// These helpers do start properly; what they test comes after the
	// handshake. A start bound well above the 2 s used for binaries that
	// never handshake keeps a loaded CI machine (a -race test binary,
	// AutoMTLS) from failing them before they misbehave.
	opts := helperOpts(mode)
	opts.StartTimeout = 15 * time.Second
	p, err := pluginhost.Load(context.Background(), self, opts)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	f, ok := p.Factory()
	if !ok {
		t.Fatal("no pipeline")
	}
	c, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{{Plugin: f.Name}}}, []gateway.Factory{f}, pipeline.Options{})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return p, c
}

// callError digs the adapter's *CallError out of the runtime's panic error:
// a failed call inside a hook is its failure (see Plugin.Factory).
func callError(err error) *pluginhost.CallError {
	var pe *pipeline.PanicError
	if errors.As(err, &pe) {
		ce, _ := pe.Value.(*pluginhost.CallError)
		return ce
	}
	return nil
}

// A plugin that dies mid-stream gives an error outcome naming the plugin,
// the call and the panic with its stack; the process is reaped.
func TestCrashMidStream(t *testing.T) {
	p, c := loadHelper(t, "crash-mid-stream")
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	body := "data: one\n\ndata: two\n\ndata: three\n\n"
	res := c.Run(context.Background(), pipeline.Request{Request: gateway.Request{Method: "GET", URL: "/"}},
		pipeline.Upstream{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body)},
		pipeline.ExchangeOptions{})
	ce := callError(res.Err)
	if res.Outcome.Kind != gateway.OutcomeError || ce == nil {
		t.Fatalf("outcome %+v err %v: want an error outcome from a *CallError", res.Outcome, res.Err)
	}
	msg := res.Err.Error()
	for _, want := range []string{`plugin "misbehaving"`, "on_response_frame", "plugin process exited", "panic: boom mid-stream", "goroutine "} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if res.Frames != 2 {
		t.Errorf("frames dispatched %d, want 2 (the crash was at the second)", res.Frames)
	}
	p.Close()
	if !gone(p.Pid()) {
		t.Fatalf("process %d left behind", p.Pid())
	}
}

// A hook that hangs is abandoned at the call timeout with an error naming
// the plugin and the call.
func TestHangPastTimeout(t *testing.T) {
	p, c := loadHelper(t, "hang")
	t0 := time.Now()
	res := c.Run(context.Background(), pipeline.Request{Request: gateway.Request{Method: "GET", URL: "/"}}, pipeline.Upstream{Status: 200}, pipeline.ExchangeOptions{})
	took := time.Since(t0)
	ce := callError(res.Err)
	if ce == nil || !errors.Is(ce, context.DeadlineExceeded) || ce.Call != "on_request" || ce.Plugin != "misbehaving" {
		t.Fatalf("err %v: want a deadline *CallError for on_request", res.Err)
	}
	// The deadline error proves the call timeout ended the call; the
	// half minute is only a hang guard (the hook never returns).
	if took > 30*time.Second {
		t.Fatalf("took %v with a 500ms call timeout: hung", took)
	}
	pid := p.Pid()
	t0 = time.Now()
	p.Close()
	if time.Since(t0) > 30*time.Second || !gone(pid) {
		t.Fatalf("close took %v; process gone: %v", time.Since(t0), gone(pid))
	}
}

// A plugin that exits in Init fails start-up with an error naming it
// (P12) and the exit.
func TestExitDuringInit_P12(t *testing.T) {
	p, c := loadHelper(t, "exit-in-init")
	err := c.Start(context.Background())
	var ce *pluginhost.CallError
	if err == nil || !errors.As(err, &ce) || !ce.Exited {
		t.Fatalf("start: %v: want a *CallError for an exited process", err)
	}
	for _, want := range []string{"P12", `plugin "misbehaving"`, "init", "plugin process exited", "exit status 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if !gone(p.Pid()) {
		p.Close()
		if !gone(p.Pid()) {
			t.Fatalf("process %d left behind", p.Pid())
		}
	}
}

// Close kills and reaps a healthy plugin within its bound.
func TestCloseReaps(t *testing.T) {
	p, err := pluginhost.Load(context.Background(), bin("mcp-parser"), pluginhost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	if gone(pid) {
		t.Fatal("no process")
	}
	t0 := time.Now()
	p.Close()
	if d := time.Since(t0); d > 30*time.Second { // hang guard
		t.Fatalf("close took %v", d)
	}
	if !gone(pid) {
		t.Fatalf("process %d left behind", pid)
	}
}

// Every example binary run by hand prints go-plugin's notice and exits
// non-zero.
func TestExampleBinariesRunDirectly(t *testing.T) {
	entries, err := os.ReadDir(binDir)
	if err != nil || len(entries) < 13 {
		t.Fatalf("%d example binaries (%v), want 13", len(entries), err)
	}
	for _, e := range entries {
		out, err := exec.Command(bin(e.Name())).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "not meant to be executed directly") {
			t.Errorf("%s: err %v, output %q", e.Name(), err, out)
		}
	}
}

// A hook that hangs past the request's deadline, which comes before the
// call timeout, fails with ErrDeadline and names the bound that was hit,
// not the longer call timeout (P28: the same path carries a finish
// deadline).
func TestHangPastCallerDeadline(t *testing.T) {
	_, c := loadHelper(t, "hang")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res := c.Run(ctx, pipeline.Request{Request: gateway.Request{Method: "GET", URL: "/"}}, pipeline.Upstream{Status: 200}, pipeline.ExchangeOptions{})
	ce := callError(res.Err)
	if ce == nil || !errors.Is(ce, pluginhost.ErrDeadline) || !errors.Is(ce, context.DeadlineExceeded) {
		t.Fatalf("err %v: want a *CallError wrapping ErrDeadline and context.DeadlineExceeded", res.Err)
	}
	// The bound named is what was left of the caller's 200ms when the
	// call began: at most 200ms, less on a busy machine, never the call
	// timeout.
	msg := ce.Error()
	m := regexp.MustCompile(`deadline of (\S+) \(the caller's`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("error %q does not name the caller's deadline", msg)
	}
	if d, err := time.ParseDuration(m[1]); err != nil || d <= 0 || d > 200*time.Millisecond {
		t.Errorf("error %q names a bound of %s; want what was left of the caller's 200ms", msg, m[1])
	}
}

// A wrapper script that is not a plugin and has started a child of its
// own (as a shell or Python launcher does) fails within the start bound,
// and the child is gone too: go-plugin reads the plugin's stdout and
// stderr to EOF before it reaps, and the child holds both open, so killing
// only the script would block Load until the child exits and leave the
// child behind.
func TestLoadNotAPluginWithChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := dir + "/child.pid"
	script := dir + "/wrapper.sh"
	body := "#!/bin/sh\nsleep 300 &\necho $! > " + pidFile + "\necho not a handshake\nwait\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err := pluginhost.Load(context.Background(), script, pluginhost.Options{StartTimeout: 2 * time.Second})
	took := time.Since(t0)
	if !errors.Is(err, pluginhost.ErrNotPlugin) {
		t.Fatalf("err %v: want ErrNotPlugin", err)
	}
	// Blocking on the child would take its 300 s sleep; a minute tells
	// the two apart on any machine.
	if took > time.Minute {
		t.Errorf("Load took %v with a 2s start timeout: it waited for the child", took)
	}
	b, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatalf("the wrapper did not start its child: %v", rerr)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second)
	for !goneOrZombie(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !goneOrZombie(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the wrapper's child %d was left behind", pid)
	}
}

// goneOrZombie is gone for a process whose parent is not this test: once
// killed, it stays a zombie until init reaps it.
func goneOrZombie(pid int) bool {
	if gone(pid) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// A plugin process that calls os.Exit or is killed in a hook is reported
// as what happened, with the exit status or signal, not as a panic.
func TestExitOrKillIsNotAPanic(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"exit-in-request", "exit status 3"},
		{"kill-in-request", "signal: killed"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			p, c := loadHelper(t, tc.mode)
			res := c.Run(context.Background(), pipeline.Request{Request: gateway.Request{Method: "GET", URL: "/"}}, pipeline.Upstream{Status: 200}, pipeline.ExchangeOptions{})
			if res.Err == nil {
				t.Fatal("no error")
			}
			msg := res.Err.Error()
			for _, want := range []string{`plugin "misbehaving" failed in on_request`, "plugin process exited", tc.want} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "panic") {
				t.Errorf("error %q calls it a panic", msg)
			}
			p.Close()
		})
	}
}
