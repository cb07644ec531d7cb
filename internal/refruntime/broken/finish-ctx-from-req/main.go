// Command finish-ctx-from-req is the reference runtime with one deliberate bug
// (finish-ctx-from-req, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "finish-ctx-from-req"}) }
