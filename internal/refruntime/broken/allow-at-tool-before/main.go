// Command allow-at-tool-before is the reference runtime with one deliberate bug
// (allow-at-tool-before, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "allow-at-tool-before"}) }
