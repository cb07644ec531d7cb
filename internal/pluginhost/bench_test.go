package pluginhost_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/abkit/abkit/internal/pluginhost"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
)

// The benchmarks measure the boundary side by side in one run: the raw
// Diagnostics echo over the same go-plugin connection is the baseline for a
// hook call (unary) and for a frame (bidirectional stream).

var benchFrame = []byte("data: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\n\n")

func benchHelper(b *testing.B) *pluginhost.Plugin {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p, err := pluginhost.Load(context.Background(), self, pluginhost.Options{Env: []string{helperEnv + "=bench"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	return p
}

// BenchmarkRawUnaryEcho is the baseline of BenchmarkUnaryHook: the same
// binary, the same kind of connection.
func BenchmarkRawUnaryEcho(b *testing.B) {
	p := load(b, "submit-guard")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Echo(ctx, benchFrame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawStreamEcho(b *testing.B) {
	p := benchHelper(b)
	s, err := p.EchoStream(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	m := &abkitv1.EchoMessage{Payload: benchFrame}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Send(m); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			b.Fatal(err)
		}
	}
	s.CloseSend()
}

// BenchmarkFrame is one frame dispatched to a streaming plugin across the
// boundary, through the adapter the pipeline runtime calls.
func BenchmarkFrame(b *testing.B) {
	p := benchHelper(b)
	f, _ := p.Factory()
	pl, err := f.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	sr := pl.(gateway.StreamingResponder)
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{Method: "POST", URL: "/v1/chat"})
	ctx := context.Background()
	ctl.Enter(f.Name, gateway.PhaseRequest, false, false)
	pl.OnRequest(ctx, ex)
	ctl.SetResponse(gateway.Response{Status: 200})
	ctl.Enter(f.Name, gateway.PhaseFrame, false, false)
	b.ReportAllocs()
	for b.Loop() {
		if a := sr.OnResponseFrame(ctx, ex, benchFrame, false); !a.IsContinue() {
			b.Fatal(a)
		}
	}
	sr.OnResponseFrame(ctx, ex, nil, true)
}

// BenchmarkUnaryHook is one submit hook call across the boundary.
func BenchmarkUnaryHook(b *testing.B) {
	p := load(b, "submit-guard")
	sub, _, _ := p.Hooks()
	h := sub[0]
	ctx := context.Background()
	s := &hooks.Submit{Model: "m", Messages: []json.RawMessage{json.RawMessage(`{"role":"user","content":"hello"}`)}}
	b.ReportAllocs()
	for b.Loop() {
		if err := h.OnSubmit(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawStart runs the plugin binary without the handshake cookie:
// it starts, prints go-plugin's notice and exits. That is the cost of a
// process start (runtime and package initialisation) and reaping only; a
// second reference for BenchmarkStartToFirstCall, not a like-for-like one
// (no handshake, no TLS, no connection).
func BenchmarkRawStart(b *testing.B) {
	path := bin("submit-guard")
	for b.Loop() {
		if err := exec.Command(path).Run(); err == nil {
			b.Fatal("the binary ran without the cookie and exited 0")
		}
	}
}

// rawDiag is a go-plugin client plugin with no abkit layer: it dispenses
// the bare Diagnostics client.
type rawDiag struct{ plugin.NetRPCUnsupportedPlugin }

func (rawDiag) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }
func (rawDiag) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return abkitv1.NewDiagnosticsClient(cc), nil
}

// BenchmarkRawGoPluginStart is the like-for-like baseline of
// BenchmarkStartToFirstCall: bare hashicorp/go-plugin with the same binary
// and the same client configuration as pluginhost.Load (gRPC only, the
// abkit handshake, AutoMTLS on or off), Start, one raw Diagnostics Echo and
// Kill — no abkit layer (no Describe, no adapters, no stderr attribution).
// Kill is not timed, as BenchmarkStartToFirstCall's close is not.
func BenchmarkRawGoPluginStart(b *testing.B) {
	b.Run("mtls", func(b *testing.B) { rawGoPluginStart(b, true) })
	b.Run("no-mtls", func(b *testing.B) { rawGoPluginStart(b, false) })
}

func rawGoPluginStart(b *testing.B, mtls bool) {
	path := bin("submit-guard")
	ctx := context.Background()
	m := &abkitv1.EchoMessage{Payload: benchFrame}
	for b.Loop() {
		c := plugin.NewClient(&plugin.ClientConfig{
			HandshakeConfig:  sdk.Handshake(),
			VersionedPlugins: map[int]plugin.PluginSet{sdk.ProtocolVersion: {sdk.PluginSetName: rawDiag{}}},
			Cmd:              exec.Command(path),
			AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
			AutoMTLS:         mtls,
			StartTimeout:     pluginhost.DefaultStartTimeout,
			Stderr:           io.Discard,
			Logger:           hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off}),
		})
		cp, err := c.Client()
		if err != nil {
			b.Fatal(err)
		}
		raw, err := cp.Dispense(sdk.PluginSetName)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := raw.(abkitv1.DiagnosticsClient).Echo(ctx, m); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		c.Kill()
		b.StartTimer()
	}
}

// BenchmarkStartToFirstCall loads the plugin (start, handshake with
// abkit's mutual TLS: the host's cached P-256 certificate, the plugin's
// fresh one, TLS 1.3; Describe) and makes its first hook call; the close
// that follows is not timed. RawGoPluginStart/mtls is go-plugin's own
// AutoMTLS (P-521 on both sides) for comparison.
func BenchmarkStartToFirstCall(b *testing.B) {
	b.Run("mtls", func(b *testing.B) { startToFirstCall(b, pluginhost.Options{}) })
	b.Run("no-mtls", func(b *testing.B) { startToFirstCall(b, pluginhost.Options{DisableAutoMTLS: true}) })
}

func startToFirstCall(b *testing.B, opts pluginhost.Options) {
	path := bin("submit-guard")
	ctx := context.Background()
	s := &hooks.Submit{Model: "m"}
	for b.Loop() {
		p, err := pluginhost.Load(ctx, path, opts)
		if err != nil {
			b.Fatal(err)
		}
		sub, _, _ := p.Hooks()
		if err := sub[0].OnSubmit(ctx, s); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
}

// BenchmarkStartRatio interleaves the two sides of the start target in one
// loop, so that a loaded machine slows both alike: each iteration runs the
// binary exec-only (RawStart), then loads it with mutual TLS and makes the
// first hook call (StartToFirstCall/mtls), then the same without TLS
// (StartToFirstCall/no-mtls), then go-plugin's own AutoMTLS
// (RawGoPluginStart/mtls). It reports the median of each and the ratios of
// the medians to exec-only; ns/op is the sum of all four.
func BenchmarkStartRatio(b *testing.B) {
	path := bin("submit-guard")
	ctx := context.Background()
	s := &hooks.Submit{Model: "m"}
	m := &abkitv1.EchoMessage{Payload: benchFrame}
	var execs, starts, autos, plains []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command(path).Run(); err == nil {
			b.Fatal("the binary ran without the cookie and exited 0")
		}
		t1 := time.Now()
		p, err := pluginhost.Load(ctx, path, pluginhost.Options{})
		if err != nil {
			b.Fatal(err)
		}
		sub, _, _ := p.Hooks()
		if err := sub[0].OnSubmit(ctx, s); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		b.StopTimer()
		p.Close()
		b.StartTimer()
		t5 := time.Now()
		p, err = pluginhost.Load(ctx, path, pluginhost.Options{DisableAutoMTLS: true})
		if err != nil {
			b.Fatal(err)
		}
		sub, _, _ = p.Hooks()
		if err := sub[0].OnSubmit(ctx, s); err != nil {
			b.Fatal(err)
		}
		t6 := time.Now()
		b.StopTimer()
		p.Close()
		b.StartTimer()
		t3 := time.Now()
		c := plugin.NewClient(&plugin.ClientConfig{
			HandshakeConfig:  sdk.Handshake(),
			VersionedPlugins: map[int]plugin.PluginSet{sdk.ProtocolVersion: {sdk.PluginSetName: rawDiag{}}},
			Cmd:              exec.Command(path),
			AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
			AutoMTLS:         true,
			StartTimeout:     pluginhost.DefaultStartTimeout,
			Stderr:           io.Discard,
			Logger:           hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off}),
		})
		cp, err := c.Client()
		if err != nil {
			b.Fatal(err)
		}
		raw, err := cp.Dispense(sdk.PluginSetName)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := raw.(abkitv1.DiagnosticsClient).Echo(ctx, m); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		b.StopTimer()
		c.Kill()
		b.StartTimer()
		execs, starts, autos = append(execs, t1.Sub(t0)), append(starts, t2.Sub(t1)), append(autos, t4.Sub(t3))
		plains = append(plains, t6.Sub(t5))
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	e, st, au, pl := med(execs), med(starts), med(autos), med(plains)
	b.ReportMetric(e, "exec-ms")
	b.ReportMetric(st, "start-ms")
	b.ReportMetric(au, "automtls-ms")
	b.ReportMetric(pl, "no-tls-ms")
	b.ReportMetric(pl/e, "no-tls/exec")
	b.ReportMetric(st/e, "start/exec")
	b.ReportMetric(au/e, "automtls/exec")
}

// BenchmarkPipelineHook is one OnRequest call of a family P plugin across
// the boundary with a typical set of request headers, none of which the
// plugin changes: the per-hook cost of carrying the exchange (headers,
// request parts, extensions) to the plugin and its answer back.
func BenchmarkPipelineHook(b *testing.B) {
	p := benchHelper(b)
	f, _ := p.Factory()
	pl, err := f.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	h := http.Header{}
	for _, kv := range [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/json"},
		{"User-Agent", "abkit-bench/1"}, {"Authorization", "Bearer x"}, {"X-Request-Id", "0123456789abcdef"},
		{"Accept-Encoding", "gzip"}, {"Content-Length", "42"}, {"X-Tenant", "acme"}} {
		h.Set(kv[0], kv[1])
	}
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{Method: "POST", URL: "/v1/chat", Header: h})
	ctx := context.Background()
	ctl.Enter(f.Name, gateway.PhaseRequest, false, false)
	b.ReportAllocs()
	for b.Loop() {
		if a := pl.OnRequest(ctx, ex); !a.IsContinue() {
			b.Fatal(a)
		}
	}
}
