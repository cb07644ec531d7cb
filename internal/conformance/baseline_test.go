package conformance_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/broken"
	"github.com/abkit/abkit/internal/conformance/cli"
)

func TestBaselinePatterns(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "more.txt"), []byte("D9/**   # all of D9\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "base.txt"), []byte("# comment\n\nP21/*/zero-frames\n@more.txt\nP5/description/plugin\n"), 0o644)
	b, err := conformance.LoadBaseline(filepath.Join(dir, "base.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{
		"P21/last-exactly-once/zero-frames": true,
		"P21/a/b/zero-frames":               false, // * is one part
		"D9/decisions/legal-per-point":      true,
		"P5/description/plugin":             true,
		"P5/description/capabilities":       false,
	} {
		if got := b.Match(id); got != want {
			t.Errorf("Match(%q) = %v, want %v", id, got, want)
		}
	}
	if u := b.Unused([]string{"P21/last-exactly-once/zero-frames"}); len(u) != 2 {
		t.Errorf("Unused = %v, want the D9 and P5 entries", u)
	}
}

// TestKnownFailingAndFixed: a listed failure does not fail the run; a
// listed case that passes is "fixed" and does.
func TestKnownFailingAndFixed(t *testing.T) {
	p := broken.Plugins(func() { panic("crash") })["long-description"]
	kf, _ := conformance.ParseBaselinePatterns([]string{"P5/description/*"})
	rep, err := conformance.Run(context.Background(), conformance.PluginSuite(), conformance.InProcess(p), conformance.Options{KnownFailing: kf})
	if err != nil {
		t.Fatal(err)
	}
	st := map[string]conformance.Status{}
	for _, r := range rep.Results {
		st[r.ID] = r.Status
	}
	if st["P5/description/capabilities"] != conformance.StatusKnownFailing || st["P5/description/plugin"] != conformance.StatusFixed {
		t.Errorf("statuses: capabilities %s (want known-failing), plugin %s (want fixed)", st["P5/description/capabilities"], st["P5/description/plugin"])
	}
	if rep.OK() {
		t.Error("a fixed baseline entry must fail the run")
	}
	var junit bytes.Buffer
	if err := conformance.WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Tests int `xml:"tests,attr"`
		Fails int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(junit.Bytes(), &v); err != nil || v.Fails != 1 || v.Tests != len(rep.Results) {
		t.Errorf("junit: %+v %v\n%s", v, err, junit.String())
	}
}

// TestCoverageHasNoGap: every rule is checked by a case or has a stated
// reason why it cannot be checked from outside.
func TestCoverageHasNoGap(t *testing.T) {
	for _, r := range conformance.Coverage(conformance.PluginSuite()) {
		if len(r.Cases) == 0 && strings.HasPrefix(r.Reason, "GAP") {
			t.Errorf("rule %s: no case and no reason", r.Rule)
		}
	}
}

func TestCLIExitCodes(t *testing.T) {
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cli.Main(context.Background(), &cli.App{Out: &out, Err: &errb}, args)
		return code, out.String() + errb.String()
	}
	bin := func(n string) string { return filepath.Join(binDir, n) }
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--plugin", bin("guardrail")}, cli.ExitOK, "0 failed"},
		{[]string{"run", "--plugin", bin("undeclared-write"), "-o", "json"}, cli.ExitFail, `"status": "fail"`},
		// P5: a bad bundle description is served and fails its case (exit 1),
		// not a plugin that never starts (exit 3).
		{[]string{"run", "--plugin", bin("long-bundle-description")}, cli.ExitFail, "P5/description/plugin"},
		{[]string{"run", "--plugin", filepath.Join(binDir, "missing")}, cli.ExitLoad, "could not be loaded"},
		{[]string{"run"}, cli.ExitUsage, "exactly one of"},
		{[]string{"run", "--plugin", bin("guardrail"), "--run", "("}, cli.ExitUsage, "--run"},
		{[]string{"explain", "P17/body-write/declared-only"}, cli.ExitOK, "writes_response_body"},
		{[]string{"explain", "P17/nope"}, cli.ExitUsage, "did you mean"},
		{[]string{"list", "--rules"}, cli.ExitOK, "P27  rule   not checked"},
	} {
		code, out := run(tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %d, output containing %q:\n%s", tc.args, code, tc.code, tc.want, out)
		}
	}
}
