// Command specific-slots-replace-target is the reference runtime taking another allowed behaviour
// at one choice point (specific-slots-replace-target, see refruntime.Alts) and declaring it, for the
// conformance self-test: it must pass, and fail only under --strict.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Alt: "specific-slots-replace-target", Declare: true}) }
