package cli_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/conformance/cli"
	"github.com/abkit/abkit/internal/testbin"
)

// TestWrongKind: a plugin given to --runtime, or a runtime to --plugin,
// exits 3 with one sentence saying what the binary is and which flag
// fits; a run of the runtime suite names the runtime under test.
func TestWrongKind(t *testing.T) {
	dir := t.TempDir()
	if err := testbin.Build(context.Background(), dir, "./cmd/abkit-runtime", "./examples/plugins/guardrail/..."); err != nil {
		t.Fatal(err)
	}
	rt, plugin := filepath.Join(dir, "abkit-runtime"), filepath.Join(dir, "guardrail")
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := cli.Main(context.Background(), &cli.App{Out: &out, Err: &errb}, args)
		return code, out.String(), errb.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--runtime", plugin}, plugin + ` is an abkit plugin ("guardrail"), not a runtime: test it with 'conformance run --plugin ` + plugin + `'`},
		{[]string{"run", "--plugin", rt}, rt + ` is an abkit runtime, not a plugin: test it with 'conformance run --runtime ` + rt + `'`},
	} {
		code, _, errOut := run(tc.args...)
		if code != cli.ExitLoad || strings.TrimSpace(errOut) != "conformance: "+tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 3 and %q", tc.args, code, errOut, tc.want)
		}
	}
	code, out, errOut := run("run", "--runtime", rt, "--run", "^P1/")
	if code != cli.ExitOK || !strings.HasPrefix(out, `conformance: runtime "abkit-reference" (`+rt+`)`) {
		t.Errorf("runtime run: exit %d, stdout %q, stderr %q", code, firstLine(out), errOut)
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestCompletion: explain and --run/--skip complete case IDs of both
// suites, --isolation its three values.
func TestCompletion(t *testing.T) {
	complete := func(args ...string) string {
		var out, errb bytes.Buffer
		cli.Main(context.Background(), &cli.App{Out: &out, Err: &errb}, append([]string{"__complete"}, args...))
		return out.String()
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"explain", ""}, []string{"P21/last-exactly-once/zero-frames\t", "P1/name/non-empty\t"}},
		{[]string{"run", "--run", ""}, []string{"P15/order/6-plugins/allow\t"}},
		{[]string{"run", "--isolation", ""}, []string{"case\t", "suite\t", "pool\t"}},
	} {
		got := complete(tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: completions lack %q:\n%.300s", tc.args, w, got)
			}
		}
	}
}
