// Command host-type-only is the reference runtime taking another allowed behaviour
// at one choice point (host-type-only, see refruntime.Alts) and declaring it, for the
// conformance self-test: it must pass, and fail only under --strict.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Alt: "host-type-only", Declare: true}) }
