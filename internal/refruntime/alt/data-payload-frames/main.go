// Command data-payload-frames is the reference runtime taking another allowed behaviour
// at one choice point (data-payload-frames, see refruntime.Alts) and declaring it, for the
// conformance self-test: it must pass, and fail only under --strict.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Alt: "data-payload-frames", Declare: true}) }
