// Command one-extension-per-id is the reference runtime taking another allowed behaviour
// at one choice point (one-extension-per-id, see refruntime.Alts) and declaring it, for the
// conformance self-test: it must pass, and fail only under --strict.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Alt: "one-extension-per-id", Declare: true}) }
