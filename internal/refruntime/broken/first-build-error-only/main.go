// Command first-build-error-only is the reference runtime with one deliberate bug
// (first-build-error-only, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "first-build-error-only"}) }
