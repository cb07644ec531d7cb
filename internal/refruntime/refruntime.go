// Package refruntime is abkit's reference runtime for the runtime
// conformance suite: it serves the Runtime service of
// proto/abkit/v1/runtime.proto over hashicorp/go-plugin and runs each
// scenario on abkit's own runtimes (internal/pipeline, internal/dispatch,
// internal/hookbus), with the scenario's probes, served by the runner on
// go-plugin's broker, as plugins, extensions and hooks.
//
// Options.Bug turns the reference into a deliberately broken runtime for
// the suite's self-test; each bug breaks exactly one rule.
package refruntime

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/plugintls"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// The runtime handshake. It differs from the plugin handshake, so that a
// plugin binary handed to `conformance run --runtime` fails the handshake
// with a clear error instead of answering the wrong service.
const (
	MagicCookieKey   = "ABKIT_RUNTIME_MAGIC_COOKIE"
	MagicCookieValue = "4c2e9a71-abkit-runtime-v1-0d5f3b88"
	// PluginSetName is the go-plugin plugin name of the Runtime service.
	PluginSetName = "abkit-runtime"
	// ProtocolVersion is the runtime protocol version.
	ProtocolVersion = 1
)

// Handshake returns the go-plugin handshake of abkit runtimes.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{ProtocolVersion: ProtocolVersion, MagicCookieKey: MagicCookieKey, MagicCookieValue: MagicCookieValue}
}

// Bug names one deliberate defect (see Bugs).
type Bug string

// Bugs lists every defect Options.Bug can inject, with the rule it breaks.
var Bugs = map[Bug]string{
	"fifo-finish":                   "P27",
	"response-forward":              "P16",
	"no-last-on-empty":              "P21",
	"finish-ctx-from-req":           "P28",
	"response-for-streamers":        "P23",
	"first-build-error-only":        "P6",
	"second-writer-accepted":        "P9",
	"allow-outside-perm":            "D9",
	"optional-fatal":                "D13",
	"warn-twice":                    "D15",
	"second-owner-accepted":         "D18",
	"no-strategy":                   "D19",
	"unspecified-fail-open":         "H3",
	"swallow-continues":             "H5",
	"frames-declaration-order":      "P20",
	"frame-overtakes":               "P20",
	"denier-not-finished":           "P26",
	"last-twice":                    "P21",
	"unknown-field-accepted":        "D8",
	"allow-honoured-at-tool-before": "D9",
	"duplicate-names-accepted":      "P1",
	"header-changes-lost":           "P32",
	"identity-leaks":                "P36",
}

// Options configure the runtime.
type Options struct {
	// Bug, when set, breaks one rule on purpose.
	Bug Bug
	// Name is reported by DescribeRuntime; empty means "abkit-reference".
	Name string
	// Alt, when set, makes the runtime take another allowed behaviour
	// at one choice point (see Alts); Declare says whether
	// DescribeRuntime declares it.
	Alt     Alt
	Declare bool
}

// Main serves the runtime over go-plugin and does not return.
func Main(opts Options) {
	if opts.Bug != "" {
		if _, ok := Bugs[opts.Bug]; !ok {
			fmt.Fprintf(os.Stderr, "abkit-runtime: unknown bug %q\n", opts.Bug)
			os.Exit(2)
		}
	}
	if opts.Alt != "" {
		if _, ok := Alts[opts.Alt]; !ok {
			fmt.Fprintf(os.Stderr, "abkit-runtime: unknown alternative %q\n", opts.Alt)
			os.Exit(2)
		}
	}
	// Mutual TLS as sdk.Serve does it (P-256, TLS 1.3; internal/plugintls).
	err := plugintls.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: {PluginSetName: &GRPCPlugin{Opts: opts}}},
		GRPCServer:       plugin.DefaultGRPCServer,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "abkit-runtime: mutual TLS with the runner: %v\n", err)
		os.Exit(1)
	}
}

// GRPCPlugin is the go-plugin plugin of the runtime protocol. The runtime
// side registers Server; the runner side (GRPCClient) is implemented by
// the conformance suite, which also needs the broker.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Opts Options
	// NewClient, on the runner side, makes the client value from the broker
	// and the connection.
	NewClient func(*plugin.GRPCBroker, *grpc.ClientConn) (any, error)
}

// GRPCServer registers the Runtime service.
func (g *GRPCPlugin) GRPCServer(b *plugin.GRPCBroker, s *grpc.Server) error {
	abkitv1.RegisterRuntimeServer(s, NewServer(b, g.Opts))
	return nil
}

// GRPCClient is the runner side.
func (g *GRPCPlugin) GRPCClient(_ context.Context, b *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	if g.NewClient == nil {
		return nil, fmt.Errorf("refruntime: no client side configured")
	}
	return g.NewClient(b, cc)
}

// Server implements the Runtime service.
type Server struct {
	abkitv1.UnimplementedRuntimeServer
	broker *plugin.GRPCBroker
	opts   Options

	mu    sync.Mutex
	conns map[uint32]abkitv1.ProbeClient
	// lastID is the identity of the last exchange, kept only by the
	// identity-leaks bug.
	lastID *gateway.Identity
}

// NewServer returns the runtime service; probes are dialled through b.
func NewServer(b *plugin.GRPCBroker, opts Options) *Server {
	return &Server{broker: b, opts: opts, conns: map[uint32]abkitv1.ProbeClient{}}
}

// probes returns the client of the runner's probe server on broker ID id,
// dialling it once.
func (s *Server) probes(id uint32) (abkitv1.ProbeClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.conns[id]; ok {
		return c, nil
	}
	cc, err := s.broker.Dial(id)
	if err != nil {
		return nil, fmt.Errorf("dial the probe server on broker ID %d: %w", id, err)
	}
	c := abkitv1.NewProbeClient(cc)
	s.conns[id] = c
	return c, nil
}

// DescribeRuntime says what the runtime hosts.
func (s *Server) DescribeRuntime(context.Context, *abkitv1.RuntimeDescribeRequest) (*abkitv1.RuntimeDescribeResponse, error) {
	name := s.opts.Name
	if name == "" {
		name = "abkit-reference"
		switch {
		case s.opts.Bug != "":
			name = "abkit-broken-" + string(s.opts.Bug)
		case s.opts.Alt != "":
			name = "abkit-alt-" + string(s.opts.Alt)
		}
	}
	d := &abkitv1.RuntimeDescribeResponse{Name: name, Version: "v1", Families: []string{"P", "D", "H"}}
	if s.opts.Alt != "" && s.opts.Declare {
		a := Alts[s.opts.Alt]
		d.Alternatives = map[string]string{a.Choice: a.Alternative}
	}
	return d, nil
}

// probeTimeout bounds one probe call; the runner answers at once.
const probeTimeout = 10 * time.Second

// call makes one probe call detached from the hook's context: what the hook
// saw of its context travels in the message (ctx_done, deadline_ns), so a
// cancelled context is observed instead of failing the call.
func call(ctx context.Context, c abkitv1.ProbeClient, pc *abkitv1.ProbeCall) *abkitv1.ProbeReply {
	// Both views of the context are read, as a plugin might use either:
	// Err set means Done is closed, and a closed Done means Err is set
	// (read after it, since a deadline may pass in between). A runtime
	// whose context breaks that panics here, which every runtime reports.
	errBefore := ctx.Err()
	done := false
	select {
	case <-ctx.Done():
		done = true
	default:
	}
	if (errBefore != nil && !done) || (done && ctx.Err() == nil) {
		panic(fmt.Sprintf("probe %d: %s: the hook's context is inconsistent: Err %v, Done closed %v", pc.Probe, pc.Hook, errBefore, done))
	}
	pc.CtxDone = done
	if d, ok := ctx.Deadline(); ok {
		pc.DeadlineNs = max(int64(time.Until(d)), 1)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	r, err := c.Call(cctx, pc)
	if err != nil {
		// The runner is gone or broken; a panic is recovered and reported by
		// every runtime, so the failure stays visible.
		panic(fmt.Sprintf("probe %d: %s call failed: %v", pc.Probe, pc.Hook, err))
	}
	return r
}

func sleep(r *abkitv1.ProbeReply) {
	if n := r.GetSleepNs(); n > 0 {
		time.Sleep(time.Duration(n))
	}
}
