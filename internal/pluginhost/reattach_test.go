package pluginhost_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/pluginserver"
	"github.com/abkit/abkit/sdk"
)

// startDebug starts an example binary with ABKIT_PLUGIN_DEBUG=1, as a user
// does under a debugger, and returns the reattach config it printed.
func startDebug(t *testing.T, name string) (*plugin.ReattachConfig, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin(name))
	cmd.Env = append(os.Environ(), sdk.DebugEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan []byte, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			lines <- s.Bytes()
		}
		close(lines)
	}()
	var j pluginserver.ReattachJSON
	select {
	case b := <-lines:
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatalf("%s printed %q, not the reattach JSON: %v", name, b, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s printed no reattach config", name)
	}
	if j.Pid != cmd.Process.Pid || j.Protocol != "grpc" || j.ProtocolVersion != sdk.ProtocolVersion {
		t.Fatalf("reattach config %+v, want grpc v%d of pid %d", j, sdk.ProtocolVersion, cmd.Process.Pid)
	}
	return &plugin.ReattachConfig{Protocol: plugin.Protocol(j.Protocol), ProtocolVersion: j.ProtocolVersion,
		Addr: pluginhost.ReattachAddr{Net: j.Addr.Network, Addr: j.Addr.String}, Pid: j.Pid, Test: j.Test}, cmd
}

// TestReattachCloseOnlyDisconnects attaches to a plugin the test started
// itself, uses it through the same adapters as Load, closes it, and checks
// that the process is still running and can be attached again.
func TestReattachCloseOnlyDisconnects(t *testing.T) {
	rc, cmd := startDebug(t, "guardrail")
	rc.Test = false // even a config that does not say test mode must not lead to a kill
	ctx := context.Background()
	for round := range 2 {
		p, err := pluginhost.Reattach(ctx, rc, pluginhost.Options{})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if p.Name() != "guardrail" || !p.Attached() || p.Pid() != cmd.Process.Pid {
			t.Errorf("name %q attached %v pid %d", p.Name(), p.Attached(), p.Pid())
		}
		if got, err := p.Echo(ctx, []byte("x")); err != nil || string(got) != "x" {
			t.Fatalf("echo: %q %v", got, err)
		}
		f, ok := p.Factory()
		if !ok {
			t.Fatal("guardrail serves no pipeline through the reattached plugin")
		}
		if _, err := f.New([]byte(`{"phrases":["drop table"]}`)); err != nil {
			t.Fatalf("new instance: %v", err)
		}
		p.Close()
		if !p.Exited() {
			t.Error("Exited is false after Close; the runner would reuse a closed connection")
		}
		time.Sleep(100 * time.Millisecond)
		if cmd.ProcessState != nil || cmd.Process.Signal(syscall.Signal(0)) != nil {
			t.Fatalf("round %d: Close stopped the user's plugin process", round)
		}
	}
}

// TestReattachDeadProcess: attaching to a process that is gone fails with a
// *LoadError naming the address.
func TestReattachDeadProcess(t *testing.T) {
	rc, cmd := startDebug(t, "guardrail")
	cmd.Process.Kill()
	cmd.Wait()
	_, err := pluginhost.Reattach(context.Background(), rc, pluginhost.Options{StartTimeout: 2 * time.Second})
	var le *pluginhost.LoadError
	if !errors.As(err, &le) || le.Pid != rc.Pid {
		t.Fatalf("err = %v, want a *LoadError for pid %d", err, rc.Pid)
	}
}
