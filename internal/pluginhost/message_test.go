package pluginhost_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/pluginhost"
)

// A plugin that sends a 100 MiB message (a description, a reason) is
// refused at once with a limit error naming the size and the bound
// (ABKIT_MAX_PLUGIN_MESSAGE), read from gRPC's length prefix rather than
// into memory: before, go-plugin's 2 GiB bound let a 100 MiB answer take
// conformance to 7 GiB, and the report blamed the plugin for hanging.
// That the error comes from the prefix is what bounds the memory; no RSS
// is measured.
func TestPluginMessageOverLimit(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, err error) {
		t.Helper()
		var le *limits.Error
		if !errors.As(err, &le) {
			t.Fatalf("error %T %v: want a *limits.Error", err, err)
		}
		msg := err.Error()
		for _, want := range []string{"the plugin sent a 100.0 MiB message, over the limit of 64 MiB", "ABKIT_MAX_PLUGIN_MESSAGE="} {
			if !strings.Contains(msg, want) {
				t.Errorf("error lacks %q:\n%s", want, msg)
			}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("reported as a deadline: %v", err)
		}
	}
	t.Run("description", func(t *testing.T) {
		opts := helperOpts("huge-description")
		opts.StartTimeout, opts.CallTimeout = time.Minute, time.Minute // hang guards
		p, err := pluginhost.Load(context.Background(), self, opts)
		if err == nil {
			p.Close()
			t.Fatal("loaded a plugin whose description is over the limit")
		}
		check(t, err)
	})
	t.Run("reason", func(t *testing.T) {
		opts := helperOpts("huge-reason")
		opts.StartTimeout, opts.CallTimeout = time.Minute, time.Minute
		p, err := pluginhost.Load(context.Background(), self, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		res := runExchange(t, p)
		if res.Err == nil {
			t.Fatalf("outcome %s (%d bytes of reason): want the call's error", res.Outcome.Kind, len(res.Outcome.Reason))
		}
		ce := callError(res.Err) // the hook's panic value
		if ce == nil {
			t.Fatalf("error %T %v: want a *CallError", res.Err, res.Err)
		}
		check(t, ce)
	})
}

// A 60 KiB line on stdout before the handshake is quoted cut, saying how
// much more there was, not whole.
func TestLongStdoutLineCut(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := helperOpts("long-garbage")
	opts.StartTimeout = time.Minute // a hang guard: the line ends the start at once
	p, err := pluginhost.Load(context.Background(), self, opts)
	if err == nil {
		p.Close()
		t.Fatal("loaded")
	}
	msg := err.Error()
	if !errors.Is(err, pluginhost.ErrNotPlugin) || len(msg) > 8<<10 || !strings.Contains(msg, "bytes more)") || !strings.Contains(msg, "gggg") {
		t.Fatalf("%d-byte error: %q", len(msg), msg)
	}
}
