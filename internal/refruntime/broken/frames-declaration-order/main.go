// Command frames-declaration-order is the reference runtime with one deliberate bug
// (frames-declaration-order, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "frames-declaration-order"}) }
