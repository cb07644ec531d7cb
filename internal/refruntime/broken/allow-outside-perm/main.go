// Command allow-outside-perm is the reference runtime with one deliberate bug
// (allow-outside-perm, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "allow-outside-perm"}) }
