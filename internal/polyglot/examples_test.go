package polyglot

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/pluginhost"
)

// runExamples runs the plugin suite on every example of one language's
// SDK (examples/<lang>/<name>/<name><ext>), as `conformance run --plugin`
// does, and fails on any counted failure. The guardrail, which uses most
// of the SDK, runs in pool isolation as `conformance run` does by default;
// the others share one process, since an interpreter's start costs
// 100–250 ms (docs/perf.md).
func runExamples(t *testing.T, lang, ext string) {
	t.Helper()
	root := repoRoot(t)
	for _, ex := range []struct {
		name, family string
		iso          conformance.Isolation
	}{
		{"guardrail", "P", conformance.IsolationPool},
		{"passthrough", "P", conformance.IsolationSuite},
		{"toolpolicy", "D", conformance.IsolationSuite},
		{"submittagger", "H", conformance.IsolationSuite},
	} {
		t.Run(ex.name, func(t *testing.T) {
			path := filepath.Join(root, "examples", lang, ex.name, ex.name+ext)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rep, err := conformance.Run(ctx, conformance.PluginSuite(), conformance.Binary(path, pluginhost.Options{}), conformance.Options{Isolation: ex.iso})
			if err != nil {
				t.Fatalf("conformance run --plugin %s: %v", path, err)
			}
			if got := rep.Plugin; got == nil || len(got.Families) == 0 || got.Families[0] != ex.family {
				t.Errorf("plugin %s: families %+v, want %s", ex.name, got, ex.family)
			}
			counts := rep.Counts()
			for _, r := range rep.Results {
				if r.Status.Bad() {
					t.Errorf("%s: %s: %s", r.ID, r.Status, r.Summary)
				}
			}
			if counts[conformance.StatusPass] == 0 {
				t.Errorf("no case passed: %v", counts)
			}
			t.Logf("%s: %v in %s", ex.name, counts, rep.Duration)
		})
	}
}
