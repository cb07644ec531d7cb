// Command no-strategy is the reference runtime with one deliberate bug
// (no-strategy, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "no-strategy"}) }
