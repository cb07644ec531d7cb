// Package examplerun holds the tests that run abkit's example plugins
// (examples/plugins/...) through abkit's own runtimes and fixture code:
// chains through internal/pipeline, the family D examples through
// internal/dispatch, the family H examples through internal/hookbus, and
// the parsers over recorded fixtures and real captures.
//
// They live here, not next to the examples, because an example imports
// only the public SDK (github.com/abkit/abkit/sdk/...), tests included: an
// example is what an author outside this module copies, and it must build
// there. Each example's own tests drive it through sdk/plugintest.
package examplerun
