package cli

import (
	"strings"
	"testing"
)

// Without a terminal, abctl alone prints the catalog as plain lines and
// says on stderr how to open the TUI; the exit code is 0.
func TestRootWithoutTerminal(t *testing.T) {
	r := run(t, false, nil)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	if !strings.Contains(r.out, "guardrail\tP\t") || strings.Contains(r.out, "NAME") {
		t.Errorf("want plain tab-separated catalog lines, got:\n%s", r.out)
	}
	if !strings.Contains(r.err, "abctl ui") {
		t.Errorf("stderr does not say how to open the TUI: %q", r.err)
	}
}

func TestUIUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"ui", "extra"}, ExitUsage, "accepts 0 arg"},
		{[]string{"ui", "--fixtures", t.TempDir()}, ExitRead, "no .fixture files"},
		{[]string{"ui", "--chain", "does-not-exist.yaml"}, ExitRead, "does-not-exist.yaml"},
		{[]string{"nosuchcommand"}, ExitUsage, "unknown command"},
	} {
		r := run(t, false, nil, tt.args...)
		if r.code != tt.code || !strings.Contains(r.err, tt.msg) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", tt.args, r.code, tt.code, r.err, tt.msg)
		}
	}
}
