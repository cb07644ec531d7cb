package pluginhost_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/sdk"
)

// serveEnvProbe reports on stderr, before its handshake, whether it sees
// OPENAI_API_KEY.
func serveEnvProbe(mode string) bool {
	if mode != "env-probe" {
		return false
	}
	v, ok := os.LookupEnv("OPENAI_API_KEY")
	fmt.Fprintf(os.Stderr, "OPENAI_API_KEY set %t: %q\n", ok, v)
	sdk.Serve(helperBundle(mode))
	return true
}

// A plugin process does not inherit the host's credentials (issue 26 item
// 13: a plugin read OPENAI_API_KEY), only the variables of the allow-list
// and those ABKIT_PLUGIN_ENV names (internal/pluginenv).
func TestPluginEnvAllowList(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-host-only")
	seen := func(t *testing.T) []string {
		t.Helper()
		opts := helperOpts("env-probe")
		opts.StartTimeout = time.Minute
		p, err := pluginhost.Load(context.Background(), self, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		// Its stderr is read on go-plugin's goroutine: wait for the line
		// (a hang guard bounds the wait).
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			lines := p.StderrLines()
			if slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "OPENAI_API_KEY set ") }) || time.Now().After(deadline) {
				return lines
			}
		}
	}
	if lines := seen(t); !slices.Contains(lines, `OPENAI_API_KEY set false: ""`) {
		t.Errorf("the plugin saw the host's OPENAI_API_KEY: %q", lines)
	}
	t.Setenv("ABKIT_PLUGIN_ENV", "OPENAI_API_KEY")
	if lines := seen(t); !slices.Contains(lines, `OPENAI_API_KEY set true: "sk-host-only"`) {
		t.Errorf("ABKIT_PLUGIN_ENV=OPENAI_API_KEY did not pass it: %q", lines)
	}
}
