// Command build-errors-without-rules is the reference runtime with build
// errors that carry neither rule IDs nor kinds, as a runtime written
// elsewhere words them, for the conformance self-test: it must pass.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{Alt: "build-errors-without-rules"}) }
