// Command duplicate-names-accepted is the reference runtime with one
// deliberate bug (duplicate-names-accepted, see refruntime.Bugs), for the
// conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "duplicate-names-accepted"}) }
