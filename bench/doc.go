// Package bench compares abkit's SSE parsing (sdk/sse) with other Go
// SSE parsers on the same streams. It is a module of its own, so that the
// peers it measures never enter abkit's dependencies; run it with
// `make bench-peers` from the repository root. See docs/perf.md.
package bench
