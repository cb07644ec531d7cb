// Command header-changes-lost is the reference runtime with one deliberate bug
// (header-changes-lost, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "header-changes-lost"}) }
