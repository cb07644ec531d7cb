// Command response-forward is the reference runtime with one deliberate bug
// (response-forward, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "response-forward"}) }
