// Package pluginhost loads abkit plugin binaries through hashicorp/go-plugin
// and makes them look like in-process plugins: to the pipeline runtime a
// gateway.Factory whose instances have exactly the optional behaviours the
// binary declares, to the intercept dispatcher an intercept.Extension, and to
// the hook bus ordinary hooks. It also describes binaries for the catalog.
//
// Every load and call is bounded: starting waits at most
// Options.StartTimeout for the handshake, every call at most
// Options.CallTimeout (or the caller's earlier deadline), and Close kills and
// reaps the process within a bounded wait. A binary's stderr is attributed to
// it; a panic printed there is reported with its stack when a call fails.
package pluginhost

import (
	"github.com/abkit/abkit/internal/pluginenv"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/plugintls"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk"
)

// Defaults of Options.
const (
	DefaultStartTimeout = 5 * time.Second
	DefaultCallTimeout  = 10 * time.Second
)

// Options tune how plugins are started and called. The zero value is ready
// to use.
type Options struct {
	// StartTimeout bounds the handshake. Zero means 5 s.
	StartTimeout time.Duration
	// CallTimeout bounds every call whose context has no earlier deadline.
	// Zero means 10 s.
	CallTimeout time.Duration
	// Stderr receives the plugin's stderr, each line prefixed with
	// "[name] ". Nil discards it (the last lines are still kept for errors).
	Stderr io.Writer
	// Args are passed to the binary.
	Args []string
	// Dir is the working directory the binary runs in; "" is the host's.
	Dir string
	// KillGrace is how long Close waits for the process to exit on its own
	// before killing it. Zero means 500 ms.
	KillGrace time.Duration
	// DisableAutoMTLS turns off the mutual TLS between host and plugin
	// (go-plugin's AutoMTLS exchange with P-256 certificates, see
	// internal/plugintls). It is on by default and costs about a
	// millisecond per start; catalog descriptions turn it off.
	DisableAutoMTLS bool
	// TLS is the host certificate shared by the plugins started with these
	// options. Nil means the one of this host process (made on first use).
	TLS *plugintls.Host
	// Env is added to the binary's environment (which also holds the
	// host's).
	Env []string
	// Groups, if set, tracks every plugin's process group from Load to
	// Close, so that a program can kill them all at once (Groups.KillAll).
	Groups *Groups
}

func (o Options) withDefaults() Options {
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 500 * time.Millisecond
	}
	return o
}

// LoadError is a binary that could not be started as an abkit plugin: no
// handshake within the bound, a wrong cookie or protocol version, or
// something else on stdout. Its process is gone when Load returns.
type LoadError struct {
	Path string
	// Pid is the process that was started and is now reaped; 0 if none.
	Pid int
	Err error
	// Stderr is the tail of what the binary wrote to stderr.
	Stderr string
}

func (e *LoadError) Error() string {
	s := fmt.Sprintf("%s is not a working abkit plugin: %v", e.Path, e.Err)
	if e.Stderr != "" {
		s += "\nits stderr ended with:\n" + e.Stderr
	}
	return s
}

func (e *LoadError) Unwrap() error { return e.Err }

// ErrNotPlugin is wrapped by LoadError when the binary did not complete the
// abkit handshake.
var ErrNotPlugin = errors.New("the binary did not complete the abkit plugin handshake (protocol v1)")

// CallError is a call that failed across the boundary: the process died, the
// call timed out, or the transport failed. It names the plugin and the call.
type CallError struct {
	Plugin string
	Call   string
	// Exited reports that the plugin process is gone.
	Exited bool
	// Panic is the panic the process printed on stderr before it died, with
	// its stack, if any.
	Panic string
	Err   error
}

func (e *CallError) Error() string {
	s := fmt.Sprintf("plugin %q: %s: %v", e.Plugin, e.Call, e.Err)
	if e.Panic != "" {
		s += "\n" + e.Panic
	}
	return s
}

func (e *CallError) Unwrap() error { return e.Err }

// Panicked reports whether the plugin process printed a panic before it
// died: only then is the failure a panic. An os.Exit, a SIGKILL or a call
// that timed out is not, and the pipeline says "failed", not "panicked".
func (e *CallError) Panicked() bool { return e.Panic != "" }

// ErrExited is wrapped by CallError when the plugin process is gone.
var ErrExited = errors.New("plugin process exited")

// ErrDeadline is wrapped by CallError (together with
// context.DeadlineExceeded) when the plugin did not answer a call within its
// bound: the caller's deadline or the call timeout, whichever came first.
// For OnFinish that bound is the finish deadline (P28), so an overrun shows
// up here rather than as the runtime's abandonment.
var ErrDeadline = errors.New("no answer within the deadline")

// Plugin is one running plugin binary.
type Plugin struct {
	path   string
	name   string
	opts   Options
	client *plugin.Client
	cmd    *exec.Cmd
	rpc    abkitv1.PluginClient
	diag   abkitv1.DiagnosticsClient
	desc   *abkitv1.DescribeResponse
	log    *stderrLog

	// attached is set for a plugin reached through Reattach: the process
	// belongs to the user, so Close only disconnects (cc) and never kills.
	attached bool
	pid      int
	cc       *grpc.ClientConn
	closed   atomic.Bool

	nextEx    atomic.Uint64
	closeOnce sync.Once

	// abortCtx ends the calls in flight when AbortCalls runs; each abort
	// starts a new one for later calls.
	abortMu  sync.Mutex
	abortCtx context.Context
	abort    context.CancelFunc
}

// grpcClient is the host side of pluginserver.GRPCPlugin.
type grpcClient struct {
	plugin.NetRPCUnsupportedPlugin
}

type clients struct {
	rpc  abkitv1.PluginClient
	diag abkitv1.DiagnosticsClient
	cc   *grpc.ClientConn
}

func (grpcClient) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("pluginhost: the host does not serve plugins")
}

func (grpcClient) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return clients{rpc: abkitv1.NewPluginClient(cc), diag: abkitv1.NewDiagnosticsClient(cc), cc: cc}, nil
}

// Versions is the protocol versions this host speaks. Version 2 will be
// added beside 1, so that v1 binaries keep working.
func Versions() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{sdk.ProtocolVersion: {sdk.PluginSetName: grpcClient{}}}
}

// Load starts the binary at path, completes the handshake within
// opts.StartTimeout (or ctx's deadline) and asks what it serves. On error
// the process is killed and reaped; the error is a *LoadError.
func Load(ctx context.Context, path string, opts Options) (*Plugin, error) {
	opts = opts.withDefaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	base := filepath.Base(abs)
	log := newStderrLog(base, opts.Stderr)
	cmd := exec.Command(abs, opts.Args...)
	cmd.Dir = opts.Dir
	OwnProcessGroup(cmd)
	start := opts.StartTimeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < start {
		start = max(time.Until(d), time.Millisecond)
	}
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake(),
		VersionedPlugins: Versions(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     start,
		Stderr:           log,
		// After the handshake go-plugin redirects the plugin's os.Stderr
		// into its gRPC stdio stream; without this, what the plugin writes
		// there (other than a runtime crash, which goes to fd 2) is lost.
		SyncStderr: log,
		Logger:     hclog.New(&hclog.LoggerOptions{Name: base, Output: io.Discard, Level: hclog.Off}),
		// limits.PluginMessage: refused from the length prefix, not read.
		GRPCDialOptions: MessageLimit(),
	}
	mtls := !opts.DisableAutoMTLS
	if mtls {
		if err := hostTLS(opts).Client(cfg, opts.Env); err != nil {
			return nil, &LoadError{Path: abs, Err: err}
		}
	} else {
		// The host's environment as a plugin gets it (pluginenv: not the
		// operator's credentials), then opts.Env, which wins.
		cmd.Env = append(pluginenv.Environ(), opts.Env...)
		cfg.SkipHostEnv = true
	}
	client := plugin.NewClient(cfg)
	fail := func(err error) (*Plugin, error) {
		KillProcessGroup(cmd) // the plugin and anything it started
		client.Kill()         // reaps; a no-op when nothing started
		le := &LoadError{Path: abs, Err: err, Stderr: log.tail()}
		if cmd.Process != nil {
			le.Pid = cmd.Process.Pid
			opts.Groups.Remove(le.Pid)
			Stopped(le.Pid) // and what it forked out of its group
		}
		return nil, le
	}
	started := Starting() // so that the orphan sweep never takes it for one
	cp, err := client.Client()
	// Client started the process on this goroutine, so cmd.Process is
	// safe to read now.
	if cmd.Process != nil {
		started(cmd.Process.Pid)
		opts.Groups.Add(cmd.Process.Pid)
	} else {
		started(0)
	}
	if err != nil {
		if isStartTimeout(err) {
			// Slow, not proven foreign: a busy machine or a cold binary.
			// The catalog must not remember it as "not a plugin".
			return fail(fmt.Errorf("%w: no handshake within %s: %w", ErrStartTimeout, start.Round(time.Millisecond), context.DeadlineExceeded))
		}
		// go-plugin quotes the plugin's first stdout line whole: a
		// 64 KiB line once filled the error.
		return fail(fmt.Errorf("%w: %s", ErrNotPlugin, clip(err.Error(), maxQuote)))
	}
	if mtls && !plugintls.Pinned(cfg) {
		return fail(fmt.Errorf("%w: %w", ErrNotPlugin, plugintls.ErrNoCertificate))
	}
	raw, err := cp.Dispense(sdk.PluginSetName)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", ErrNotPlugin, err))
	}
	cl := raw.(clients)
	p := &Plugin{path: abs, name: base, opts: opts, client: client, cmd: cmd, rpc: cl.rpc, diag: cl.diag, cc: cl.cc, log: log}
	if err := p.describe(ctx); err != nil {
		return fail(err)
	}
	return p, nil
}

// MessageLimit is the gRPC dial options that bound what a plugin or
// runtime may send in one message (limits.PluginMessage) and what the host
// sends it. go-plugin sets both to 2 GiB; gRPC refuses a larger message
// from its length prefix, before reading it.
func MessageLimit() []grpc.DialOption {
	n := limits.PluginMessage.Int()
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(n), grpc.MaxCallSendMsgSize(n))}
}

var tooLarge = regexp.MustCompile(`larger than max \((\d+) vs\. (\d+)\)`)

// MessageError turns gRPC's "received message larger than max (N vs. M)"
// into the limit error naming what was refused (what), the size and the
// variable that raises the bound; nil for any other error. The host is not
// slow and the plugin did not hang: it sent too much.
func MessageError(what string, err error) *limits.Error {
	m := tooLarge.FindStringSubmatch(status.Convert(err).Message())
	if m == nil {
		return nil
	}
	got, _ := strconv.ParseInt(m[1], 10, 64)
	le := limits.PluginMessage.Error(what, "plugin message size", got,
		"a plugin's answers carry bodies (ABKIT_MAX_BODY) and headers, its description a few KiB; check what the plugin sends")
	if max, err := strconv.ParseInt(m[2], 10, 64); err == nil {
		le.Max = max
	}
	le.Detail = fmt.Sprintf("the plugin sent a %s message, over the limit of %s", limits.Bytes(got), limits.Bytes(le.Max))
	return le
}

// processTLS is the host certificate of this process, made on first use:
// one key pair per host process, not per plugin, is what keeps a start
// cheap (docs/perf.md).
var processTLS plugintls.Host

// ProcessTLS is the host certificate of this process, for other go-plugin
// clients of the process (the conformance runtime launcher).
func ProcessTLS() *plugintls.Host { return &processTLS }

func hostTLS(o Options) *plugintls.Host {
	if o.TLS != nil {
		return o.TLS
	}
	return &processTLS
}

// ErrStartTimeout is wrapped by a LoadError when the binary did not finish
// the handshake in time. It also wraps context.DeadlineExceeded and never
// ErrNotPlugin: a slow start says nothing about what the binary is.
var ErrStartTimeout = errors.New("the plugin did not start in time")

// isStartTimeout reports go-plugin's handshake timeout, which it reports
// only as text.
func isStartTimeout(err error) bool {
	return strings.Contains(err.Error(), "timeout while waiting for plugin to start")
}

// describe asks the plugin what it serves, once, right after connecting.
func (p *Plugin) describe(ctx context.Context) error {
	dctx, cancel := p.callCtx(ctx)
	defer cancel()
	// The first call on a fresh connection waits for it to be ready: on a
	// busy machine the transport can fail its first attempt ("error
	// reading server preface") and reconnect, which fails a call made
	// without WaitForReady at once. The call's deadline still bounds it.
	d, err := p.rpc.Describe(dctx, &abkitv1.DescribeRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return p.callErr("describe", err)
	}
	if d.GetName() == "" {
		return errors.New("describe answered with an empty name")
	}
	p.desc, p.name = d, d.GetName()
	p.log.setName(p.name)
	return nil
}

// Name is the plugin's name as it described itself.
func (p *Plugin) Name() string { return p.name }

// Path is the binary's absolute path.
func (p *Plugin) Path() string { return p.path }

// Pid is the plugin process's ID.
func (p *Plugin) Pid() int {
	if p.attached {
		return p.pid
	}
	if p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Description is what the binary said about itself.
func (p *Plugin) Description() *abkitv1.DescribeResponse { return p.desc }

// Exited reports whether the plugin process is gone. For a reattached
// plugin it also reports true once Close disconnected from it: the process
// may live on, but it is gone for this host.
func (p *Plugin) Exited() bool {
	return p.client.Exited() || (p.attached && p.closed.Load())
}

// Attached reports whether the plugin was reached through Reattach, so that
// its process belongs to someone else and Close leaves it running.
func (p *Plugin) Attached() bool { return p.attached }

// Stderr returns the last lines the plugin wrote to stderr.
func (p *Plugin) Stderr() string { return p.log.tail() }

// StderrLines returns every line the plugin wrote to stderr that is kept:
// the first 400, then the latest 400 (a panic's first line is never
// dropped).
func (p *Plugin) StderrLines() []string {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return append([]string(nil), p.log.lines...)
}

// Close stops the plugin process and reaps it: it asks the process to exit
// (go-plugin closes the connection), waits at most Options.KillGrace, then
// kills it. For a plugin reached through Reattach, Close only closes this
// host's connection: the process was started by the user (for example
// under a debugger) and keeps running. Close is safe to call more than once.
func (p *Plugin) Close() error {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		if p.attached {
			// Not client.Kill: its graceful path asks the plugin's
			// controller to shut the server down, which would end the
			// user's process.
			if p.cc != nil {
				_ = p.cc.Close()
			}
			return
		}
		done := make(chan struct{})
		go func() { p.client.Kill(); close(done) }()
		select {
		case <-done:
		case <-time.After(p.opts.KillGrace):
		}
		// Always, also after a clean exit: whatever the plugin started in
		// its group (a helper, a daemon) must not outlive it.
		KillProcessGroup(p.cmd)
		<-done // go-plugin reaps the process once it and its children are dead
		p.opts.Groups.Remove(p.Pid())
		// What it forked into a session or group of its own (orphans.go).
		Stopped(p.Pid())
	})
	return nil
}

// callCtx bounds a call by the call timeout; AbortCalls ends it at once.
func (p *Plugin) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	return p.abortable(cctx, cancel)
}

// ErrAborted is the cause of a call that AbortCalls ended.
var ErrAborted = errors.New("call aborted: the host is stopping")

// abortable makes ctx end when AbortCalls runs, as well as when it would
// anyway; cancel is ctx's own cancel, called by the returned one.
func (p *Plugin) abortable(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
	p.abortMu.Lock()
	if p.abortCtx == nil {
		p.abortCtx, p.abort = context.WithCancel(context.Background())
	}
	a := p.abortCtx
	p.abortMu.Unlock()
	actx, acancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(a, func() { acancel(ErrAborted) })
	return actx, func() { stop(); acancel(nil); cancel() }
}

// AbortCalls makes every call to the plugin that is in flight return at
// once with an error (cause ErrAborted), however long its timeout: the
// host is stopping (SIGINT, SIGTERM) and a hung call must not hold it up.
// Calls made afterwards, such as the shutdown calls of an orderly stop,
// run as usual.
func (p *Plugin) AbortCalls() {
	p.abortMu.Lock()
	defer p.abortMu.Unlock()
	if p.abort != nil {
		p.abort()
	}
	p.abortCtx, p.abort = context.WithCancel(context.Background())
}

// callErr turns a transport failure into a *CallError naming the plugin and
// the call, with the panic the process printed if it died.
func (p *Plugin) callErr(call string, err error) error {
	return p.callErrWithin(call, err, 0)
}

// callErrWithin is callErr for a call whose bound was computed from the
// caller's deadline; bound, when set and shorter than the call timeout, is
// named in a deadline error so the message says which limit was hit (a
// negative bound: the caller's deadline had already passed).
func (p *Plugin) callErrWithin(call string, err error, bound time.Duration) error {
	ce := &CallError{Plugin: p.name, Call: call, Err: err}
	code := status.Code(err)
	switch code {
	case codes.DeadlineExceeded:
		switch {
		case bound < 0:
			ce.Err = fmt.Errorf("%w: the caller's deadline had passed as the call began (call timeout %s): %w", ErrDeadline, p.opts.CallTimeout, context.DeadlineExceeded)
		case bound > 0 && bound < p.opts.CallTimeout:
			ce.Err = fmt.Errorf("%w of %s (the caller's; call timeout %s): %w", ErrDeadline, bound.Round(time.Millisecond), p.opts.CallTimeout, context.DeadlineExceeded)
		default:
			ce.Err = fmt.Errorf("%w (call timeout %s): %w", ErrDeadline, p.opts.CallTimeout, context.DeadlineExceeded)
		}
	case codes.Canceled:
		ce.Err = fmt.Errorf("call cancelled: %w", context.Canceled)
	case codes.ResourceExhausted:
		if le := MessageError("answer", err); le != nil {
			ce.Err = le
		}
	}
	if code == codes.Unavailable || code == codes.Canceled || code == codes.Internal || code == codes.Unknown {
		// A dying process first shows up as a broken connection; give the
		// reaper a moment to notice the exit so the error says why.
		deadline := time.Now().Add(500 * time.Millisecond)
		for !p.client.Exited() && time.Now().Before(deadline) && code == codes.Unavailable {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if p.client.Exited() {
		ce.Exited = true
		ce.Err = fmt.Errorf("%w (%s)", ErrExited, exitStatus(p.cmd))
		if p.attached {
			ce.Err = fmt.Errorf("%w (pid %d, started outside this host)", ErrExited, p.pid)
		}
		ce.Panic = p.log.panicText()
	}
	return ce
}

func exitStatus(cmd *exec.Cmd) string {
	if cmd == nil || cmd.ProcessState == nil {
		return "status unknown"
	}
	return cmd.ProcessState.String()
}

// Echo is the Diagnostics unary echo: the raw cost of one call over this
// plugin's connection.
func (p *Plugin) Echo(ctx context.Context, b []byte) ([]byte, error) {
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	m, err := p.diag.Echo(ctx, &abkitv1.EchoMessage{Payload: b})
	if err != nil {
		return nil, p.callErr("echo", err)
	}
	return m.GetPayload(), nil
}

// EchoStream opens the Diagnostics bidirectional echo stream.
func (p *Plugin) EchoStream(ctx context.Context) (abkitv1.Diagnostics_EchoStreamClient, error) {
	return p.diag.EchoStream(ctx)
}

// stderrLog keeps the tail of a plugin's stderr and, from a line starting
// with "panic:" or "fatal error:", the panic and its stack. It forwards
// every line, prefixed with the plugin's name, to out.
type stderrLog struct {
	mu      sync.Mutex
	name    string
	out     io.Writer
	partial []byte // the line being written, at most maxQuote bytes of it
	cut     bool   // the line being written went past maxQuote and was cut
	lines   []string
	panicAt int // index in lines of the panic's first line; -1 if none
}

const stderrKeep = 400

// maxQuote bounds one line of a plugin's output (stdout before the
// handshake, a stderr line) that an error quotes or the host keeps.
const maxQuote = 4 << 10

// clip cuts s to n bytes, on a character boundary, saying how much more
// there was.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d bytes more)", s[:n], len(s)-n)
}

func newStderrLog(name string, out io.Writer) *stderrLog {
	return &stderrLog{name: name, out: out, panicAt: -1}
}

func (l *stderrLog) setName(n string) {
	l.mu.Lock()
	l.name = n
	l.mu.Unlock()
}

// Write receives go-plugin's copy of the raw stderr (before the handshake
// a line, or 64 KiB of one, then its newline, in separate writes; after
// it, whatever the plugin wrote). A line is held up to maxQuote bytes: one
// that goes past it is kept and forwarded at once, cut there and saying
// so, and what follows up to its newline is skipped, so that a plugin
// writing without a newline costs the host 4 KiB and the lines after it
// still arrive.
func (l *stderrLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if !l.cut {
			if room := maxQuote - len(l.partial); len(part) > room {
				l.partial = append(l.partial, part[:room]...)
				l.cut = true
				l.addLine(cutLine(l.partial))
			} else {
				l.partial = append(l.partial, part...)
			}
		}
		if i < 0 {
			break
		}
		if !l.cut {
			l.addLine(string(l.partial))
		}
		l.partial, l.cut = l.partial[:0], false
		b = b[i+1:]
	}
	return n, nil
}

// cutLine is the first maxQuote bytes of a longer line, cut on a
// character boundary, saying where it was cut.
func cutLine(p []byte) string {
	n := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax; k-- {
		if utf8.RuneStart(p[k]) {
			if !utf8.FullRune(p[k:]) {
				n = k // a character whose rest was cut off
			}
			break
		}
	}
	return fmt.Sprintf("%s… (line cut at %d bytes, the limit of one stderr line; the rest of it is skipped)", p[:n], maxQuote)
}

// addLine forwards line and keeps it (the last stderrKeep lines, more
// from a panic on).
func (l *stderrLog) addLine(line string) {
	if l.out != nil {
		fmt.Fprintf(l.out, "[%s] %s\n", l.name, line)
	}
	if l.panicAt < 0 && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")) {
		l.panicAt = len(l.lines)
	}
	switch {
	case len(l.lines) < stderrKeep:
		l.lines = append(l.lines, line)
	case l.panicAt != 0:
		// Drop the oldest line, but never a panic's first line.
		l.lines = append(l.lines[1:], line)
		if l.panicAt > 0 {
			l.panicAt--
		}
	case len(l.lines) < 4*stderrKeep:
		l.lines = append(l.lines, line) // a long stack: keep more of it
	}
}

func (l *stderrLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := max(0, len(l.lines)-20)
	return strings.Join(l.lines[n:], "\n")
}

func (l *stderrLog) panicText() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.panicAt < 0 {
		return ""
	}
	return strings.Join(l.lines[l.panicAt:], "\n")
}

// Host tracks the plugins it loaded so that they can all be closed at once,
// in particular when the host process is told to stop.
type Host struct {
	opts   Options
	mu     sync.Mutex
	ps     []*Plugin
	closed bool
}

// ErrHostClosed is returned by Host.Load after Host.Close.
var ErrHostClosed = errors.New("pluginhost: the host is closed")

// NewHost returns a host that loads plugins with opts.
func NewHost(opts Options) *Host { return &Host{opts: opts} }

// Load loads a plugin and tracks it. After Close it fails with
// ErrHostClosed; a load that was under way when Close ran stops its plugin
// and fails the same way, so that a signal arriving mid-load leaves no
// process behind.
func (h *Host) Load(ctx context.Context, path string) (*Plugin, error) {
	return h.load(ctx, path, h.opts)
}

func (h *Host) load(ctx context.Context, path string, opts Options) (*Plugin, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("load %s: %w", path, ErrHostClosed)
	}
	p, err := Load(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		p.Close()
		return nil, fmt.Errorf("load %s: %w", path, ErrHostClosed)
	}
	h.ps = append(h.ps, p)
	h.mu.Unlock()
	return p, nil
}

// LoadCommand is Load for a command line (a manifest's plugin, an
// interpreter and its script): argv[0] is the program, the rest its
// arguments, before the host's Options.Args; cmd.Dir is the working
// directory ("" for the host's).
func (h *Host) LoadCommand(ctx context.Context, cmd catalog.Command) (*Plugin, error) {
	if len(cmd.Argv) == 0 {
		return nil, errors.New("pluginhost: empty command line")
	}
	o := h.opts
	o.Args = append(slices.Clone(cmd.Argv[1:]), o.Args...)
	if cmd.Dir != "" {
		o.Dir = cmd.Dir
	}
	return h.load(ctx, cmd.Argv[0], o)
}

// AbortCalls ends the calls in flight to every plugin of the host at once
// (Plugin.AbortCalls).
func (h *Host) AbortCalls() {
	h.mu.Lock()
	ps := slices.Clone(h.ps)
	h.mu.Unlock()
	for _, p := range ps {
		p.AbortCalls()
	}
}

// Close closes every plugin the host loaded, concurrently, and waits until
// all are reaped. Later loads fail with ErrHostClosed.
func (h *Host) Close() error {
	h.mu.Lock()
	ps := h.ps
	h.ps, h.closed = nil, true
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() { p.Close() })
	}
	wg.Wait()
	return nil
}
