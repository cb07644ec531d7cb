// Package runtimesuite is abkit's second conformance suite: the binary
// under test is a runtime (a gateway or an agent host) serving the Runtime
// service of proto/abkit/v1/runtime.proto. The runner hands it scenarios
// whose plugins, extensions and hooks are probes the runner serves on
// go-plugin's broker; probes record every call with what it could observe,
// and the cases judge the calls and the runtime's answers against the
// rules. It reuses the plugin suite's runner, reports and baselines
// (package conformance): a runtime is a conformance.Subject whose
// descriptor lists the families it hosts.
package runtimesuite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/plugintls"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/runtimekit"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Runtime is a running runtime under test. Cases reach it through
// conformance.T.Subject(), which is a *Runtime.
type Runtime struct {
	client *plugin.Client
	cmd    *exec.Cmd
	groups *pluginhost.Groups
	rpc    abkitv1.RuntimeClient
	desc   *conformance.Reported
	broker uint32
	stderr *tail

	mu     sync.Mutex
	probes map[uint32]*probe
	next   atomic.Uint32
	srv    *grpc.Server
	once   sync.Once
}

var _ conformance.Subject = (*Runtime)(nil)

// Describe returns the runtime's descriptor: its name and the families it
// hosts.
func (r *Runtime) Describe() *conformance.Reported { return r.desc }

// Plugin is empty: a runtime is not a plugin.
func (r *Runtime) Plugin() sdk.Plugin { return sdk.Plugin{Name: r.desc.Name} }

// Stderr returns the tail of the runtime's stderr.
func (r *Runtime) Stderr() string { return r.stderr.String() }

// Exited reports why the runtime process is gone, or nil.
func (r *Runtime) Exited() error {
	if !r.client.Exited() {
		return nil
	}
	return errors.New("the runtime process exited; its stderr ended with:\n" + conformance.StripDebugLog(r.stderr.String()))
}

// killGrace is how long Close lets the runtime exit on its own.
const killGrace = 500 * time.Millisecond

// Close kills the runtime process and stops the probe server.
func (r *Runtime) Close() error {
	r.once.Do(func() {
		// go-plugin's graceful kill asks the runtime to exit; a runtime
		// that does not (or whose children keep its output open) has its
		// whole process group killed after a grace period.
		done := make(chan struct{})
		go func() { r.client.Kill(); close(done) }()
		select {
		case <-done:
		case <-time.After(killGrace):
		}
		// Always, also after a clean exit: nothing the runtime started
		// may outlive it.
		pluginhost.KillProcessGroup(r.cmd)
		<-done
		if r.cmd.Process != nil {
			r.groups.Remove(r.cmd.Process.Pid)
			pluginhost.Stopped(r.cmd.Process.Pid) // what it forked out of its group
		}
		r.mu.Lock()
		srv := r.srv
		r.mu.Unlock()
		if srv != nil {
			srv.Stop()
		}
	})
	return nil
}

// Launcher starts a runtime binary for every subject.
type Launcher struct {
	Path string
	// StartTimeout bounds the handshake; zero means 5 s.
	StartTimeout time.Duration
	// Groups, if set, tracks the runtime's process group until Close.
	Groups *pluginhost.Groups
}

// Target is the binary's path.
func (l Launcher) Target() string { return l.Path }

// Kind says that the launcher starts a runtime, for reports and errors.
func (l Launcher) Kind() string { return "runtime" }

type clientSide struct {
	broker *plugin.GRPCBroker
	rpc    abkitv1.RuntimeClient
}

// Launch starts the runtime, completes the handshake, serves the probes on
// the broker and asks the runtime to describe itself.
func (l Launcher) Launch(ctx context.Context) (conformance.Subject, error) {
	abs, err := filepath.Abs(l.Path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("runtime binary: %w", err)
	}
	start := l.StartTimeout
	if start <= 0 {
		start = 5 * time.Second
	}
	st := &tail{}
	cmd := exec.Command(abs)
	// Its own process group, killed on failure and on Close, so that a
	// wrapper script's children go too and cannot hold the reap up.
	pluginhost.OwnProcessGroup(cmd)
	cfg := &plugin.ClientConfig{
		HandshakeConfig: runtimekit.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{runtimekit.ProtocolVersion: {runtimekit.PluginSetName: &runtimekit.GRPCPlugin{
			NewClient: func(b *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
				return clientSide{broker: b, rpc: abkitv1.NewRuntimeClient(cc)}, nil
			}}}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     start,
		Stderr:           st,
		Logger:           hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off}),
		GRPCDialOptions:  pluginhost.MessageLimit(), // limits.PluginMessage
	}
	// go-plugin's AutoMTLS exchange with P-256 certificates (the host's
	// made once per process), as for plugins: internal/plugintls. It also
	// sets the runtime's environment to a plugin's (internal/pluginenv's
	// allow-list and what ABKIT_PLUGIN_ENV names), not conformance's
	// whole one: the runtime under test gets no operator credential
	// (TestRuntimeEnvAllowList).
	if err := pluginhost.ProcessTLS().Client(cfg, nil); err != nil {
		return nil, err
	}
	client := plugin.NewClient(cfg)
	fail := func(err error) (conformance.Subject, error) {
		pluginhost.KillProcessGroup(cmd)
		client.Kill()
		if cmd.Process != nil {
			l.Groups.Remove(cmd.Process.Pid)
			pluginhost.Stopped(cmd.Process.Pid)
		}
		return nil, &startError{err: err, stderr: st.String()}
	}
	started := pluginhost.Starting() // so that the orphan sweep never takes it for one
	cp, err := client.Client()
	if cmd.Process != nil { // started on this goroutine: safe to read
		started(cmd.Process.Pid)
		l.Groups.Add(cmd.Process.Pid)
	} else {
		started(0)
	}
	if err != nil {
		return fail(fmt.Errorf("%s is not a working abkit runtime: the runtime handshake (%s, protocol %d) failed: %w",
			abs, runtimekit.MagicCookieKey, runtimekit.ProtocolVersion, err))
	}
	if !plugintls.Pinned(cfg) {
		return fail(fmt.Errorf("%s is not a working abkit runtime: %w", abs, plugintls.ErrNoCertificate))
	}
	raw, err := cp.Dispense(runtimekit.PluginSetName)
	if err != nil {
		return fail(fmt.Errorf("%s: dispense %q: %w", abs, runtimekit.PluginSetName, err))
	}
	cs := raw.(clientSide)
	r := &Runtime{client: client, cmd: cmd, groups: l.Groups, rpc: cs.rpc, stderr: st, probes: map[uint32]*probe{}}
	r.broker = cs.broker.NextId()
	go cs.broker.AcceptAndServe(r.broker, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(opts...)
		abkitv1.RegisterProbeServer(s, probeServer{r: r})
		r.mu.Lock()
		r.srv = s
		r.mu.Unlock()
		return s
	})
	dctx, cancel := context.WithTimeout(ctx, start)
	defer cancel()
	d, err := r.rpc.DescribeRuntime(dctx, &abkitv1.RuntimeDescribeRequest{})
	if err != nil {
		return fail(fmt.Errorf("%s: DescribeRuntime: %w", abs, err))
	}
	if d.GetName() == "" {
		return fail(fmt.Errorf("%s: DescribeRuntime answered with an empty name", abs))
	}
	r.desc = &conformance.Reported{Name: d.GetName(), Version: d.GetVersion(), Families: d.GetFamilies(),
		Description: "runtime", Alternatives: d.GetAlternatives()}
	return r, nil
}

type startError struct {
	err    error
	stderr string
}

func (e *startError) Error() string      { return e.err.Error() }
func (e *startError) Unwrap() error      { return e.err }
func (e *startError) StderrText() string { return e.stderr }

// tail keeps the last 64 KiB a process wrote.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if n := len(t.buf) - 64<<10; n > 0 {
		t.buf = t.buf[n:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
