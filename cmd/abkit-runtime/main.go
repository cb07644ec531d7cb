// Command abkit-runtime is abkit's reference runtime for the runtime
// conformance suite: it serves internal/pipeline, internal/dispatch and
// internal/hookbus behind the Runtime service (proto/abkit/v1/runtime.proto)
// over hashicorp/go-plugin. It is started by `conformance run --runtime`;
// run directly it prints go-plugin's notice and exits 1.
package main

import "github.com/abkit/abkit/internal/refruntime"

func main() { refruntime.Main(refruntime.Options{}) }
