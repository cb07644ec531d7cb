// Command response-for-streamers is the reference runtime with one deliberate bug
// (response-for-streamers, see refruntime.Bugs), for the conformance self-test.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Bug: "response-for-streamers"}) }
