// Command frames-after-walk is the reference runtime taking another allowed behaviour
// at one choice point (frames-after-walk, see refruntime.Alts) and declaring it, for the
// conformance self-test: it must pass, and fail only under --strict.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Alt: "frames-after-walk", Declare: true}) }
