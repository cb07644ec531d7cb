// Command last-twice is the reference runtime with one deliberate bug
// (last-twice, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "last-twice"}) }
