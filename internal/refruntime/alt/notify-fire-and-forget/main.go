// Command notify-fire-and-forget is the reference runtime taking another allowed behaviour
// at one choice point (notify-fire-and-forget, see refruntime.Alts) and declaring it, for the
// conformance self-test: it must pass, and fail only under --strict.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Alt: "notify-fire-and-forget", Declare: true}) }
