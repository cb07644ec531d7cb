// Command second-owner-accepted is the reference runtime with one deliberate bug
// (second-owner-accepted, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "second-owner-accepted"}) }
