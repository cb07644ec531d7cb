package conformance_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/pluginhost"
)

// BenchmarkPluginSuite runs the whole plugin suite against one example
// plugin binary with the default parallelism and case isolation (a fresh
// process per case). Target: at most 5 s on 2 cores.
func BenchmarkPluginSuite(b *testing.B) {
	for _, name := range []string{"guardrail", "audit-log", "permission-policy"} {
		b.Run(name, func(b *testing.B) {
			l := conformance.Binary(filepath.Join(binDir, name), pluginhost.Options{})
			for b.Loop() {
				rep, err := conformance.Run(context.Background(), conformance.PluginSuite(), l, conformance.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if !rep.OK() {
					b.Fatalf("%s fails %v", name, failing(rep))
				}
			}
		})
	}
}
