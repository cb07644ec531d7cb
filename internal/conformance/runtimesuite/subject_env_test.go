package runtimesuite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/pluginenv"
)

// A runtime under test is a plugin of conformance in the sense that
// matters here: it does not inherit conformance's credentials (issue 26
// item 13), only the allow-list of internal/pluginenv and what
// ABKIT_PLUGIN_ENV names. The runtime is the reference runtime behind a
// wrapper script that writes what it sees of OPENAI_API_KEY before it
// execs the runtime, so the variables checked are those of the process
// conformance started.
func TestRuntimeEnvAllowList(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen")
	script := filepath.Join(dir, "env-runtime.sh")
	body := "#!/bin/sh\nprintf '%s:%s' \"${OPENAI_API_KEY+set}\" \"$OPENAI_API_KEY\" > '" + seen + "'\nexec '" + implPath(t, "abkit-runtime") + "'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-host-only")
	launch := func(t *testing.T) string {
		t.Helper()
		_ = os.Remove(seen)
		r, err := Launcher{Path: script, StartTimeout: time.Minute}.LaunchRuntime(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		// Written before the exec, so before the handshake Launch waited for.
		b, err := os.ReadFile(seen)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := launch(t); got != ":" {
		t.Errorf("the runtime saw the host's OPENAI_API_KEY: %q", got)
	}
	t.Setenv(pluginenv.Extra, "OPENAI_API_KEY")
	if got := launch(t); got != "set:sk-host-only" {
		t.Errorf("%s=OPENAI_API_KEY did not pass it to the runtime: %q", pluginenv.Extra, got)
	}
}
