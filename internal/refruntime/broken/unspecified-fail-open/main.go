// Command unspecified-fail-open is the reference runtime with one deliberate bug
// (unspecified-fail-open, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "unspecified-fail-open"}) }
