package runtimesuite

import (
	"context"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
)

// BenchmarkRuntimeSuite runs the whole runtime suite against the reference
// runtime with the default options (case isolation, -p GOMAXPROCS).
func BenchmarkRuntimeSuite(b *testing.B) {
	for b.Loop() {
		rep, err := conformance.Run(context.Background(), Suite(), Launcher{Path: impls[0].Path}, conformance.Options{})
		if err != nil || !rep.OK() {
			b.Fatalf("the reference runtime did not pass: %v", err)
		}
	}
}

// BenchmarkSelftest runs the selftest over every reference and broken
// implementation (binaries already built).
func BenchmarkSelftest(b *testing.B) {
	for b.Loop() {
		rows, err := Selftest(context.Background(), impls, conformance.Options{})
		if err != nil || !AllOK(rows) {
			b.Fatalf("selftest: %v", err)
		}
	}
}
