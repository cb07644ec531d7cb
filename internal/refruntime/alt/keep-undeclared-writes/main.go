// Command keep-undeclared-writes is the reference runtime taking another allowed behaviour
// at one choice point (keep-undeclared-writes, see refruntime.Alts) and declaring it, for the
// conformance self-test: it must pass, and fail only under --strict.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Alt: "keep-undeclared-writes", Declare: true}) }
