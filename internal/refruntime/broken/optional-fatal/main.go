// Command optional-fatal is the reference runtime with one deliberate bug
// (optional-fatal, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "optional-fatal"}) }
