// Command frame-overtakes is the reference runtime with one deliberate bug
// (frame-overtakes, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "frame-overtakes"}) }
