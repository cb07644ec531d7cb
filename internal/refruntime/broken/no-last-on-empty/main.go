// Command no-last-on-empty is the reference runtime with one deliberate bug
// (no-last-on-empty, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "no-last-on-empty"}) }
