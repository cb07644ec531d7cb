// Command allow-honoured-at-tool-before is the reference runtime with one deliberate bug
// (allow-honoured-at-tool-before, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "allow-honoured-at-tool-before"}) }
