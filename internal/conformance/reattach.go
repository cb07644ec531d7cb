package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-plugin"

	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/pluginserver"
)

// ReattachConfig is go-plugin's reattach information for a plugin the user
// started themselves (for example under a debugger), in the JSON form a
// plugin prints when started with ABKIT_PLUGIN_DEBUG=1 (see sdk.Serve) and
// go-plugin's PLUGIN_REATTACH uses: {"Protocol":"grpc",
// "ProtocolVersion":1, "Addr":{"Network":"unix","String":"/tmp/..."},
// "Pid":1234, "Test":true}.
//
// It is the type the plugin side prints (pluginserver.ReattachJSON), so the
// two cannot drift.
type ReattachConfig = pluginserver.ReattachJSON

// ParseReattach reads a reattach config from JSON text or from a file
// holding it. Besides the bare config it accepts a map of one plugin name
// to its config (the shape of Terraform's TF_REATTACH_PROVIDERS).
func ParseReattach(s string) (*ReattachConfig, error) {
	text := strings.TrimSpace(s)
	if !strings.HasPrefix(text, "{") {
		b, err := limits.ReadFileMax(s, "reattach file size", 1<<20, "a reattach config is a few hundred bytes of JSON", "")
		if limits.Is(err) {
			return nil, fmt.Errorf("--reattach: %w", err)
		}
		if err != nil {
			return nil, fmt.Errorf("--reattach: neither JSON nor a readable file: %w", err)
		}
		text = strings.TrimSpace(string(b))
	}
	var c ReattachConfig
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return nil, fmt.Errorf("--reattach: %w", err)
	}
	if c.Addr.Network == "" && c.Pid == 0 {
		var named map[string]ReattachConfig
		if json.Unmarshal([]byte(text), &named) == nil && len(named) == 1 {
			for _, v := range named {
				c = v
			}
		}
	}
	if c.Addr.Network == "" || c.Addr.String == "" {
		return nil, errors.New("--reattach: the config names no address (Addr.Network, Addr.String); use the JSON line the plugin printed when started with ABKIT_PLUGIN_DEBUG=1")
	}
	if c.Pid <= 0 {
		return nil, errors.New("--reattach: the config names no process (Pid)")
	}
	if c.Protocol != "" && c.Protocol != "grpc" {
		return nil, fmt.Errorf("--reattach: protocol %q; abkit plugins speak grpc", c.Protocol)
	}
	return &c, nil
}

// goPlugin converts the config to go-plugin's form.
func goPlugin(c *ReattachConfig) *plugin.ReattachConfig {
	return &plugin.ReattachConfig{
		Protocol:        plugin.Protocol(c.Protocol),
		ProtocolVersion: c.ProtocolVersion,
		Addr:            pluginhost.ReattachAddr{Net: c.Addr.Network, Addr: c.Addr.String},
		Pid:             c.Pid,
		Test:            true,
	}
}

// SingleProcess is implemented by launchers whose subjects all share one
// process that the runner did not start and cannot restart or duplicate.
// Run then uses suite isolation, notes why in the report, and skips the
// cases that need a second process (Case.FreshProcess).
type SingleProcess interface {
	// SingleProcess says why there is only one process.
	SingleProcess() string
}

// Reattach returns a launcher for a plugin process the user started (see
// ReattachConfig). Every Launch connects to that same process through
// pluginhost.Reattach; closing a subject only disconnects, so the process
// outlives the run.
func Reattach(c *ReattachConfig, opts pluginhost.Options) Launcher {
	return &reattach{c: c, opts: opts}
}

type reattach struct {
	c    *ReattachConfig
	opts pluginhost.Options
}

func (r *reattach) Target() string {
	return fmt.Sprintf("reattach:%s:%s (pid %d)", r.c.Addr.Network, r.c.Addr.String, r.c.Pid)
}

func (r *reattach) SingleProcess() string {
	return fmt.Sprintf("--reattach: every case runs against the one process you started (pid %d), so isolation is suite: a crash or hang in one case can affect the next, and cases that need a second process are skipped", r.c.Pid)
}

func (r *reattach) Launch(ctx context.Context) (Subject, error) {
	p, err := pluginhost.Reattach(ctx, goPlugin(r.c), r.opts)
	if err != nil {
		return nil, err
	}
	return newProcSubject(p), nil
}
