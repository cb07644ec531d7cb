package runtimesuite_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/runtimesuite"
	"github.com/abkit/abkit/internal/testbin"
)

// minipipeDeclares are the alternatives minipipe-runtime declares.
var minipipeDeclares = []string{"P15.reject-status", "P13.overrun", "P30.overrun"}

// TestMinipipeRuntime: the example runtime of examples/runtimes/minipipe
// (a small pipeline written apart from abkit's, behind an adapter on
// sdk/runtimekit) hosts family P only and passes the runtime suite: no
// counted failure, every D and H case skipped. It declares the
// alternatives it takes (P15.reject-status=as-given, P13.overrun and
// P30.overrun=synchronous), so --strict fails it on those choices and on
// nothing else.
func TestMinipipeRuntime(t *testing.T) {
	dir := t.TempDir()
	if err := testbin.Build(context.Background(), dir, "./examples/runtimes/minipipe/cmd/minipipe-runtime"); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "minipipe-runtime")
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
	run := func(strict bool) *conformance.Report {
		rep, err := conformance.Run(context.Background(), runtimesuite.Suite(), runtimesuite.Launcher{Path: bin}, conformance.Options{Strict: strict})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run(false)
	ran := 0
	for _, r := range rep.Results {
		family := r.ID[:1]
		switch {
		case family != "P" && r.Status != conformance.StatusSkip:
			t.Errorf("%s: %s; minipipe hosts family P only, so it should be skipped", r.ID, r.Status)
		case r.Status == conformance.StatusFail:
			t.Errorf("%s failed: %v", r.ID, r.Failures)
		case family == "P" && r.Status == conformance.StatusPass:
			ran++
		}
	}
	if !rep.OK() {
		t.Errorf("the report is not OK: %v", rep.Counts())
	}
	if ran < 90 {
		t.Errorf("%d family P cases passed; want the family run (about 100)", ran)
	}
	t.Logf("minipipe: %v", rep.Counts())

	// Strict: abkit's own choices count, so the declared alternatives fail.
	declared := minipipeDeclares
	var failed []string
	for _, r := range run(true).Results {
		if r.Status != conformance.StatusFail {
			continue
		}
		failed = append(failed, r.ID)
		ok := slices.ContainsFunc(r.Rules, func(rule string) bool {
			return slices.ContainsFunc(declared, func(c string) bool { return strings.HasPrefix(c, rule+".") })
		})
		if !ok {
			t.Errorf("--strict: %s (rules %v) failed, which no declared alternative explains: %v", r.ID, r.Rules, r.Failures)
		}
	}
	if len(failed) == 0 {
		t.Error("--strict failed nothing; minipipe declares alternatives abkit's reference does not take")
	}
}
