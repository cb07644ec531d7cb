package sdk

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/abkit/abkit/internal/pluginserver"
	"github.com/abkit/abkit/internal/plugintls"
	"github.com/abkit/abkit/sdk/gateway"
)

// The go-plugin handshake every abkit plugin binary and host share. A
// binary started without the cookie in its environment prints go-plugin's
// "not meant to be executed directly" notice and exits with status 1.
const (
	MagicCookieKey   = "ABKIT_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "7d1f3c5e-abkit-plugin-v1-b2a94e60"
	// PluginSetName is the name the protocol is served under in go-plugin's
	// plugin set.
	PluginSetName = "abkit"
	// ProtocolVersion is the protocol version this SDK serves (proto/abkit/v1).
	// Hosts negotiate it through go-plugin's versioned plugin sets.
	ProtocolVersion = 1
)

// SDKVersion is reported by Describe, for diagnostics.
const SDKVersion = pluginserver.SDKVersion

// Handshake returns the go-plugin handshake of abkit plugins.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// Serve serves p over hashicorp/go-plugin (gRPC; mutual TLS 1.3 when the
// host asks for it, as go-plugin's AutoMTLS does, with P-256 certificates
// instead of AutoMTLS's P-521 ones, which are slow to make) and does not
// return. A plugin binary's main calls only this:
//
//	func main() { sdk.Serve(myplugin.Plugin()) }
//
// If p is not servable (see [Plugin.Servable]) or its extension cannot be
// made, Serve writes why to stderr and exits with status 2. A description
// that breaks P5 (see [Plugin.CheckDescription]) is not such a problem:
// Serve writes a warning naming P5 and the fix to stderr and serves p, so
// that hosts judge it (catalog lint flags it, and the conformance case
// P5/description/plugin fails it) and the author reads their verdict
// rather than a plugin that never started.
//
// # Debug mode
//
// With ABKIT_PLUGIN_DEBUG=1 in its environment the binary does not wait for
// a host to start it: it serves in go-plugin's reattach mode (ServeConfig.Test,
// no magic cookie, no TLS) and prints one line of JSON to stdout, the
// reattach config a host connects with:
//
//	{"Protocol":"grpc","ProtocolVersion":1,"Addr":{"Network":"unix","String":"/tmp/plugin123"},"Pid":4242,"Test":true}
//
// so that the plugin can run under a debugger and be driven by
// `conformance run --reattach FILE` (or any host using pluginhost.Reattach).
// Hosts only disconnect from such a process; it runs until SIGINT or
// SIGTERM, then exits with status 0.
func Serve(p Plugin) {
	// The certificate is made while the server is built (the description
	// probes the pipeline), not after.
	early := plugintls.StartIdentity()
	srv, err := newServer(p)
	if err != nil {
		fmt.Fprintf(os.Stderr, "abkit plugin %q cannot be served: %v\n", p.Name, err)
		os.Exit(2)
	}
	if err := gateway.CheckDescription(p.Description); err != nil {
		// Served anyway: the host's verdict (conformance, catalog lint) is
		// what the author needs, not a plugin that never starts.
		fmt.Fprintf(os.Stderr, "abkit plugin %q: warning: Plugin.Description breaks P5: %v; serving it anyway, hosts will flag it (catalog lint, conformance case P5/description/plugin)\n", p.Name, err)
	}
	cfg := serveConfig(srv)
	if v := os.Getenv(DebugEnv); v != "" && v != "0" && v != "false" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		// go-plugin logs at trace level to stderr by default; keep what
		// matters to someone at a debugger.
		cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: p.Name, Output: os.Stderr, Level: hclog.Warn})
		fmt.Fprintf(os.Stderr, "abkit plugin %q: debug mode (%s): the reattach config is on stdout; stop with Ctrl-C\n", p.Name, DebugEnv)
		if err := pluginserver.ServeDebug(ctx, cfg, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "abkit plugin %q: debug mode: %v\n", p.Name, err)
			os.Exit(1)
		}
		return
	}
	if err := plugintls.Serve(cfg, early); err != nil {
		fmt.Fprintf(os.Stderr, "abkit plugin %q: mutual TLS with the host: %v\n", p.Name, err)
		os.Exit(1)
	}
}

// DebugEnv is the environment variable that starts a plugin binary in debug
// (reattach) mode; see [Serve].
const DebugEnv = "ABKIT_PLUGIN_DEBUG"

// ServeDebug serves p in go-plugin's reattach mode (no magic cookie, no
// TLS) until ctx ends, after writing the reattach config as one line of
// JSON to out; a host connects with it (`conformance run --reattach`).
// Serve does this when ABKIT_PLUGIN_DEBUG is set; a test may call it to
// serve a plugin inside its own process. It refuses a bundle Serve would
// refuse.
func ServeDebug(ctx context.Context, p Plugin, out io.Writer) error {
	srv, err := newServer(p)
	if err != nil {
		return fmt.Errorf("abkit plugin %q cannot be served: %w", p.Name, err)
	}
	return pluginserver.ServeDebug(ctx, serveConfig(srv), out)
}

// serveConfig is go-plugin's configuration for serving srv.
func serveConfig(srv *pluginserver.Server) *plugin.ServeConfig {
	return &plugin.ServeConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: {PluginSetName: pluginserver.GRPCPlugin{Impl: srv}}},
		GRPCServer:       plugin.DefaultGRPCServer,
	}
}

// newServer checks that p can be served ([Plugin.Servable]), makes its
// extension (family D) and returns the protocol server for it.
func newServer(p Plugin) (*pluginserver.Server, error) {
	b, err := p.bundle()
	if err != nil {
		return nil, err
	}
	return pluginserver.NewServer(b), nil
}

// bundle is p as the protocol server takes it, its extension made.
func (p Plugin) bundle() (pluginserver.Bundle, error) {
	if err := p.Servable(); err != nil {
		return pluginserver.Bundle{}, err
	}
	b := pluginserver.Bundle{Name: p.Name, Description: p.Description, Version: p.Version, Pipeline: p.Pipeline, Alternatives: p.Alternatives}
	if p.Extension != nil {
		ext, err := p.Extension.New()
		if err != nil {
			return pluginserver.Bundle{}, fmt.Errorf("plugin %q: make extension: %w", p.Name, err)
		}
		if ext == nil {
			return pluginserver.Bundle{}, fmt.Errorf("plugin %q: Extension.New returned no extension", p.Name)
		}
		b.Manifest, b.Extension = p.Extension.Manifest, ext
	}
	if h := p.Hooks; h != nil {
		b.Hooks = &pluginserver.Hooks{Submit: h.Submit, Parts: h.Parts, Tools: h.Tools}
	}
	return b, nil
}
