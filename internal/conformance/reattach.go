package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/abkit/abkit/internal/pluginhost"
)

// ReattachConfig is go-plugin's reattach information for a plugin the user
// started themselves (for example under a debugger), in the JSON form
// go-plugin prints as PLUGIN_REATTACH: {"Protocol":"grpc",
// "ProtocolVersion":1, "Addr":{"Network":"unix","String":"/tmp/..."},
// "Pid":1234, "Test":true}.
type ReattachConfig struct {
	Protocol        string `json:"Protocol"`
	ProtocolVersion int    `json:"ProtocolVersion"`
	Addr            struct {
		Network string `json:"Network"`
		String  string `json:"String"`
	} `json:"Addr"`
	Pid  int  `json:"Pid"`
	Test bool `json:"Test"`
}

// ParseReattach reads a reattach config from JSON text or from a file
// holding it.
func ParseReattach(s string) (*ReattachConfig, error) {
	text := strings.TrimSpace(s)
	if !strings.HasPrefix(text, "{") {
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, fmt.Errorf("--reattach: neither JSON nor a readable file: %w", err)
		}
		text = string(b)
	}
	var c ReattachConfig
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return nil, fmt.Errorf("--reattach: %w", err)
	}
	if c.Addr.Network == "" || c.Addr.String == "" {
		return nil, errors.New("--reattach: the config names no address (Addr.Network, Addr.String)")
	}
	if c.Protocol != "" && c.Protocol != "grpc" {
		return nil, fmt.Errorf("--reattach: protocol %q; abkit plugins speak grpc", c.Protocol)
	}
	return &c, nil
}

// Reattach returns a launcher for a plugin process the user started.
//
// internal/pluginhost has no reattach entry point yet, so Launch reports
// that; the flag, its parsing and the run's single-process isolation are in
// place for when it does.
func Reattach(c *ReattachConfig, opts pluginhost.Options) Launcher {
	return &reattach{c: c, opts: opts}
}

type reattach struct {
	c    *ReattachConfig
	opts pluginhost.Options
}

func (r *reattach) Target() string { return "reattach:" + r.c.Addr.Network + ":" + r.c.Addr.String }

func (r *reattach) Launch(context.Context) (Subject, error) {
	return nil, errors.New("reattach is not supported yet: internal/pluginhost cannot attach to a running process; start the plugin with --plugin BIN instead")
}
