// Command denier-not-finished is the reference runtime with one deliberate bug
// (denier-not-finished, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "denier-not-finished"}) }
