// Command swallow-continues is the reference runtime with one deliberate bug
// (swallow-continues, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "swallow-continues"}) }
