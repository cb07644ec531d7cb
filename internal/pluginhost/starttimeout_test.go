package pluginhost_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pluginhost"
)

// A binary that is silent past the start timeout is slow, not proven
// foreign: the error is ErrStartTimeout and a deadline, never ErrNotPlugin,
// so the catalog's dir: cache does not remember it as "not a plugin".
func TestLoadSlowStartIsNotNotAPlugin(t *testing.T) {
	script := t.TempDir() + "/slow.sh"
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := pluginhost.Load(context.Background(), script, pluginhost.Options{StartTimeout: 300 * time.Millisecond})
	if !errors.Is(err, pluginhost.ErrStartTimeout) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, pluginhost.ErrNotPlugin) {
		t.Fatalf("err %v: want ErrStartTimeout and DeadlineExceeded, not ErrNotPlugin", err)
	}
	_, err = pluginhost.Describer{Options: pluginhost.Options{StartTimeout: 300 * time.Millisecond}}.Describe(context.Background(), script)
	if errors.Is(err, catalog.ErrNotPlugin) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("describe: %v: want a deadline, not catalog.ErrNotPlugin", err)
	}
}
