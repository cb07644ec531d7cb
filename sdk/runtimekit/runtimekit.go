// Package runtimekit is what a runtime author needs to put a runtime (a
// gateway, an agent host, a hook bus) under abkit's runtime conformance
// suite, `conformance run --runtime`, so that the adapter is the
// translation between the scenarios and the runtime alone.
//
// The suite starts the adapter binary through hashicorp/go-plugin and sends
// it scenarios (proto/abkit/v1/runtime.proto). The plugins, extensions and
// hooks of each scenario are probes the runner serves; the runtime calls
// them as it calls its own plugins, and the suite judges what the probes
// saw and the result the adapter returns. The kit provides:
//
//   - [Serve]: the runtime handshake, mutual TLS and the Runtime service;
//     the adapter fills a [Runtime] with one function per family it hosts.
//   - [Probes]: the runner's probe server, dialled over go-plugin's broker,
//     and [Probes.Call], a hook call carrying what the hook observed.
//   - Scenario types ([PipelineScenario], [InterceptScenario],
//     [HookScenario]) wrapping the generated ones with their probes.
//   - For a pipeline runtime: [NewUpstream] plays the upstream (a JSON
//     body, scripted chunks, an early end, an error), [NewClient] plays the
//     client (its status, headers and body; its cancellation), and
//     [PipelineScenario.Run] drives the lifecycle calls and the exchanges
//     and fills the run.
//   - Probe-backed implementations of abkit's own SDK interfaces, for a
//     runtime that takes them or for an adapter translating from them:
//     [NewProbePlugin] (a gateway.Plugin), [ProbeExtension] (an
//     intercept.Extension) and [ProbeHook] (sdk/hooks hooks).
//
// An adapter's main is then:
//
//	func main() {
//		runtimekit.Serve(runtimekit.Runtime{
//			Name:         "my-runtime",
//			Alternatives: map[string]string{"P15.reject-status": "as-given"},
//			Pipeline:     runPipeline,
//		})
//	}
//
// docs/conformance-runtime.md walks through a port; examples/runtimes/minipipe
// is a complete one.
package runtimekit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/abkit/abkit/internal/plugintls"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
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

// Runtime is an adapter: what it says about itself and one function per
// family it hosts. A nil function is a family not hosted; the suite skips
// its cases. A function returns an error only when the scenario could not
// be run at all (the case fails with it); what the runtime did, build
// errors included, goes in the run.
type Runtime struct {
	// Name and Version are reported by DescribeRuntime; Name is required.
	Name, Version string
	// Alternatives declares, per choice point ID, the alternative the
	// runtime takes where the contracts allow several (`conformance list
	// --rules` lists them). The suite then checks the declared alternative
	// as a rule.
	Alternatives map[string]string
	// Pipeline runs family P scenarios.
	Pipeline func(ctx context.Context, sc PipelineScenario) (*abkitv1.PipelineRun, error)
	// Intercept runs family D scenarios.
	Intercept func(ctx context.Context, sc InterceptScenario) (*abkitv1.InterceptRun, error)
	// Hooks runs family H scenarios.
	Hooks func(ctx context.Context, sc HookScenario) (*abkitv1.HookRun, error)
}

// Families returns the families r hosts, as DescribeRuntime reports them.
func (r Runtime) Families() []string {
	var f []string
	for _, x := range []struct {
		set bool
		f   string
	}{{r.Pipeline != nil, "P"}, {r.Intercept != nil, "D"}, {r.Hooks != nil, "H"}} {
		if x.set {
			f = append(f, x.f)
		}
	}
	return f
}

// Check reports why r cannot be served.
func (r Runtime) Check() error {
	if r.Name == "" {
		return errors.New("runtimekit: Runtime.Name is empty: set the name DescribeRuntime reports")
	}
	if len(r.Families()) == 0 {
		return errors.New("runtimekit: Runtime hosts no family: set Pipeline, Intercept or Hooks")
	}
	return nil
}

// Serve serves r to the conformance runner over hashicorp/go-plugin (gRPC,
// mutual TLS as for plugins) and does not return. A Runtime that fails
// [Runtime.Check] is refused: Serve writes why to stderr and exits with
// status 2.
func Serve(r Runtime) {
	early := plugintls.StartIdentity() // made while the rest is set up
	if err := r.Check(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	err := plugintls.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: {PluginSetName: &GRPCPlugin{Runtime: r}}},
		GRPCServer:       plugin.DefaultGRPCServer,
	}, early)
	if err != nil {
		fmt.Fprintf(os.Stderr, "runtime %q: mutual TLS with the runner: %v\n", r.Name, err)
		os.Exit(1)
	}
}

// GRPCPlugin is the go-plugin plugin of the runtime protocol. The runtime
// side serves Runtime; the runner side sets NewClient, which makes its
// client value from the broker (on which it serves the probes) and the
// connection.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Runtime   Runtime
	NewClient func(*plugin.GRPCBroker, *grpc.ClientConn) (any, error)
}

// GRPCServer registers the Runtime service.
func (g *GRPCPlugin) GRPCServer(b *plugin.GRPCBroker, s *grpc.Server) error {
	abkitv1.RegisterRuntimeServer(s, NewServer(b, g.Runtime))
	return nil
}

// GRPCClient is the runner side.
func (g *GRPCPlugin) GRPCClient(_ context.Context, b *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	if g.NewClient == nil {
		return nil, errors.New("runtimekit: no client side configured (GRPCPlugin.NewClient)")
	}
	return g.NewClient(b, cc)
}

// NewServer returns the Runtime service of r, dialling the probes through
// b; Serve uses it, a test may serve it on a broker of its own.
func NewServer(b *plugin.GRPCBroker, r Runtime) abkitv1.RuntimeServer {
	return &server{rt: r, broker: b, conns: map[uint32]*Probes{}}
}

type server struct {
	abkitv1.UnimplementedRuntimeServer
	rt     Runtime
	broker *plugin.GRPCBroker

	mu    sync.Mutex
	conns map[uint32]*Probes
}

// probes returns the runner's probe server on broker ID id, dialling it
// once per ID.
func (s *server) probes(id uint32) (*Probes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.conns[id]; ok {
		return p, nil
	}
	cc, err := s.broker.Dial(id)
	if err != nil {
		return nil, fmt.Errorf("dial the probe server on broker ID %d: %w", id, err)
	}
	p := NewProbes(abkitv1.NewProbeClient(cc))
	s.conns[id] = p
	return p, nil
}

func (s *server) DescribeRuntime(context.Context, *abkitv1.RuntimeDescribeRequest) (*abkitv1.RuntimeDescribeResponse, error) {
	return &abkitv1.RuntimeDescribeResponse{Name: s.rt.Name, Version: s.rt.Version, Families: s.rt.Families(), Alternatives: s.rt.Alternatives}, nil
}

func (s *server) RunPipeline(ctx context.Context, sc *abkitv1.PipelineScenario) (*abkitv1.PipelineRun, error) {
	return runFamily(ctx, s, "P", s.rt.Pipeline, sc.GetBrokerId(), func(p *Probes) PipelineScenario {
		return PipelineScenario{PipelineScenario: sc, Probes: p}
	})
}

func (s *server) RunIntercept(ctx context.Context, sc *abkitv1.InterceptScenario) (*abkitv1.InterceptRun, error) {
	return runFamily(ctx, s, "D", s.rt.Intercept, sc.GetBrokerId(), func(p *Probes) InterceptScenario {
		return InterceptScenario{InterceptScenario: sc, Probes: p}
	})
}

func (s *server) RunHooks(ctx context.Context, sc *abkitv1.HookScenario) (*abkitv1.HookRun, error) {
	return runFamily(ctx, s, "H", s.rt.Hooks, sc.GetBrokerId(), func(p *Probes) HookScenario {
		return HookScenario{HookScenario: sc, Probes: p}
	})
}

// runFamily hands a scenario of family to run, the runtime's func for it
// (nil when the runtime does not host the family), with the probes of the
// scenario's broker ID, which scenario joins to it.
func runFamily[S, R any](ctx context.Context, s *server, family string, run func(context.Context, S) (R, error), broker uint32, scenario func(*Probes) S) (R, error) {
	if run == nil {
		var none R
		return none, fmt.Errorf("runtime %q does not host family %s", s.rt.Name, family)
	}
	p, err := s.probes(broker)
	if err != nil {
		var none R
		return none, err
	}
	return run(ctx, scenario(p))
}

// PipelineScenario is a family P scenario with its probes.
type PipelineScenario struct {
	*abkitv1.PipelineScenario
	Probes *Probes
}

// InterceptScenario is a family D scenario with its probes.
type InterceptScenario struct {
	*abkitv1.InterceptScenario
	Probes *Probes
}

// HookScenario is a family H scenario with its probes.
type HookScenario struct {
	*abkitv1.HookScenario
	Probes *Probes
}
