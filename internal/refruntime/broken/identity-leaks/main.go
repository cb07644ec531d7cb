// Command identity-leaks is the reference runtime with one deliberate bug
// (identity-leaks, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "identity-leaks"}) }
