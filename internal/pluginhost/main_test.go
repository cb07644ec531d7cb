package pluginhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/testbin"

	"github.com/hashicorp/go-plugin"

	"github.com/abkit/abkit/internal/pluginserver"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// binDir holds the example plugin binaries, built once in TestMain.
var binDir string

const helperEnv = "ABKIT_PLUGINHOST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		runHelper(mode)
		return
	}
	if path := os.Getenv(hostEnv); path != "" {
		runHost(path)
		return
	}
	dir, err := os.MkdirTemp("", "abkit-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	if err := testbin.Build(context.Background(), dir, "./examples/plugins/...", "./internal/pluginhost/testdata/headerstamp", "./internal/pluginhost/testdata/bearergate"); err != nil {
		fmt.Fprintf(os.Stderr, "building the example plugins: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func bin(name string) string { return filepath.Join(binDir, name) }

// helperPlugin is a family P plugin whose hooks misbehave on demand.
type helperPlugin struct{ mode string }

func (helperPlugin) Name() string { return "misbehaving" }
func (helperPlugin) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Misbehaves on purpose for the host's failure tests"}
}

func (h helperPlugin) Init(context.Context) error {
	if h.mode == "exit-in-init" {
		fmt.Fprintln(os.Stderr, "exiting during init on purpose")
		os.Exit(4)
	}
	return nil
}

func (h helperPlugin) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	switch h.mode {
	case "hang":
		select {}
	case "exit-in-request":
		os.Exit(3)
	case "huge-reason":
		return gateway.Reject(403, strings.Repeat("r", 100<<20))
	case "kill-in-request":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	return gateway.Continue()
}

func (helperPlugin) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

func (h helperPlugin) OnResponseFrame(_ context.Context, _ *gateway.Exchange, frame []byte, last bool) gateway.Action {
	if h.mode == "crash-mid-stream" && strings.Contains(string(frame), "two") {
		// A panic on another goroutine cannot be recovered: the process dies
		// mid-call, as a real bug would kill it.
		done := make(chan struct{})
		go func() { panic("boom mid-stream") }()
		<-done
	}
	return gateway.Continue()
}

func helperBundle(mode string) sdk.Plugin {
	desc := "Misbehaves on purpose for the host's failure tests"
	if mode == "huge-description" {
		desc = strings.Repeat("x", 100<<20)
	}
	return sdk.Plugin{
		Name:        "misbehaving",
		Description: desc,
		Pipeline: &gateway.Factory{Name: "misbehaving", New: func(json.RawMessage) (gateway.Plugin, error) {
			return helperPlugin{mode: mode}, nil
		}},
	}
}

// testServer is p behind the protocol server, for helpers that serve with
// go-plugin directly rather than through sdk.Serve (which keeps its server
// to itself). The helpers serve families P and H only.
func testServer(p sdk.Plugin) *pluginserver.Server {
	if err := p.Servable(); err != nil || p.Extension != nil {
		panic(fmt.Sprintf("test helper %q: servable: %v; extension: %v", p.Name, err, p.Extension != nil))
	}
	b := pluginserver.Bundle{Name: p.Name, Description: p.Description, Version: p.Version, Pipeline: p.Pipeline}
	if h := p.Hooks; h != nil {
		b.Hooks = &pluginserver.Hooks{Submit: h.Submit, Parts: h.Parts, Tools: h.Tools}
	}
	return pluginserver.NewServer(b)
}

// runHelper is the test binary re-executed as a (misbehaving) plugin.
func runHelper(mode string) {
	if serveBoundaryHelper(mode) || serveHookPanicHelper(mode) || serveStderrFlood(mode) || serveEnvProbe(mode) || serveCancelHelper(mode) || serveHeaderHelper(mode) || serveExtensionHelper(mode) || serveUndeclaredHelper(mode) {
		os.Exit(0)
	}
	switch mode {
	case "no-handshake":
		time.Sleep(time.Minute)
	case "garbage":
		fmt.Println("hello, I am not a plugin")
		time.Sleep(time.Minute)
	case "long-garbage":
		fmt.Println(strings.Repeat("g", 60<<10)) // under go-plugin's 64 KiB line bound, so it is quoted
		time.Sleep(time.Minute)
	case "wrong-cookie":
		hs := sdk.Handshake()
		hs.MagicCookieKey, hs.MagicCookieValue = "SOME_OTHER_PLUGIN", "other"
		srv := testServer(helperBundle(mode))
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: hs,
			VersionedPlugins: map[int]plugin.PluginSet{1: {sdk.PluginSetName: pluginserver.GRPCPlugin{Impl: srv}}},
			GRPCServer:       plugin.DefaultGRPCServer})
	case "wrong-version":
		srv := testServer(helperBundle(mode))
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: sdk.Handshake(),
			VersionedPlugins: map[int]plugin.PluginSet{7: {sdk.PluginSetName: pluginserver.GRPCPlugin{Impl: srv}}},
			GRPCServer:       plugin.DefaultGRPCServer})
	case "plain-automtls":
		// Served by go-plugin alone, as a plugin that does not use
		// sdk.Serve would be: AutoMTLS with go-plugin's own P-521
		// certificate when the host sends one.
		srv := testServer(helperBundle(mode))
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: sdk.Handshake(),
			VersionedPlugins: map[int]plugin.PluginSet{sdk.ProtocolVersion: {sdk.PluginSetName: pluginserver.GRPCPlugin{Impl: srv}}},
			GRPCServer:       plugin.DefaultGRPCServer})
	case "plaintext":
		// Ignores the host's certificate and answers without TLS.
		os.Unsetenv("PLUGIN_CLIENT_CERT")
		srv := testServer(helperBundle(mode))
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: sdk.Handshake(),
			VersionedPlugins: map[int]plugin.PluginSet{sdk.ProtocolVersion: {sdk.PluginSetName: pluginserver.GRPCPlugin{Impl: srv}}},
			GRPCServer:       plugin.DefaultGRPCServer})
	default:
		sdk.Serve(helperBundle(mode))
	}
	os.Exit(0)
}
