package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/abkit/abkit/sdk"
)

// Reattach connects to an abkit plugin process that someone else started —
// typically a plugin run under a debugger with ABKIT_PLUGIN_DEBUG=1, which
// prints the reattach config (see sdk.Serve) — through go-plugin's
// ClientConfig.Reattach, over gRPC. It asks Describe like Load, and the
// plugin then works through the same adapters (Factory, Extension, Hooks).
//
// The process is not this host's: Close only closes the connection and
// never stops or kills it, and the plugin's stderr stays where its owner
// sees it (Stderr returns nothing). c.Test is forced on, so that go-plugin
// never kills the process either. AutoMTLS is not used: a plugin started
// by hand has no client certificate to answer. On error the connection is
// closed and the error is a *LoadError.
func Reattach(ctx context.Context, c *plugin.ReattachConfig, opts Options) (*Plugin, error) {
	opts = opts.withDefaults()
	if c == nil || c.Addr == nil {
		return nil, &LoadError{Path: "reattach", Err: errors.New("the reattach config names no address")}
	}
	target := fmt.Sprintf("reattach:%s:%s (pid %d)", c.Addr.Network(), c.Addr.String(), c.Pid)
	if c.Protocol != "" && c.Protocol != plugin.ProtocolGRPC {
		return nil, &LoadError{Path: target, Err: fmt.Errorf("protocol %q: abkit plugins speak grpc", c.Protocol)}
	}
	if c.Pid <= 0 {
		return nil, &LoadError{Path: target, Err: errors.New("the reattach config names no process (Pid)")}
	}
	rc := *c
	rc.Protocol = plugin.ProtocolGRPC
	rc.Test = true // never let go-plugin kill the user's process
	if rc.ProtocolVersion == 0 {
		rc.ProtocolVersion = sdk.ProtocolVersion
	}
	set, ok := Versions()[rc.ProtocolVersion]
	if !ok {
		return nil, &LoadError{Path: target, Pid: c.Pid,
			Err: fmt.Errorf("%w: the plugin serves protocol version %d; this host speaks %d", ErrNotPlugin, rc.ProtocolVersion, sdk.ProtocolVersion)}
	}
	log := newStderrLog(target, opts.Stderr)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: sdk.Handshake(),
		// No negotiation happens on reattach: go-plugin dispenses from
		// Plugins, the set of the version the config names.
		Plugins:          set,
		Reattach:         &rc,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     opts.StartTimeout,
		Stderr:           log,
		SyncStderr:       log,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "reattach", Output: io.Discard, Level: hclog.Off}),
	})
	p := &Plugin{path: target, name: target, opts: opts, client: client, log: log, attached: true, pid: c.Pid}
	fail := func(err error) (*Plugin, error) {
		p.Close()
		return nil, &LoadError{Path: target, Pid: c.Pid, Err: err}
	}
	cp, err := client.Client()
	if err != nil {
		return fail(fmt.Errorf("%w: %v", ErrNotPlugin, err))
	}
	raw, err := cp.Dispense(sdk.PluginSetName)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", ErrNotPlugin, err))
	}
	cl := raw.(clients)
	p.rpc, p.diag, p.cc = cl.rpc, cl.diag, cl.cc
	if err := p.describe(ctx); err != nil {
		return fail(err)
	}
	return p, nil
}

// ReattachAddr is a net.Addr from the two strings of a reattach config.
type ReattachAddr struct{ Net, Addr string }

func (a ReattachAddr) Network() string { return a.Net }
func (a ReattachAddr) String() string  { return a.Addr }

var _ net.Addr = ReattachAddr{}
