// Package abkitv1 is the generated Go code of abkit's plugin protocol,
// version 1 (proto/abkit/v1/abkit.proto): the Plugin service every plugin
// binary serves for the contract families P, D and H, and the Diagnostics
// echo service used as a baseline. Regenerate it with `make proto`.
//
// Plugin authors in Go do not use this package directly; they call
// sdk.Serve. Authors in other languages generate their own stubs from the
// .proto file and follow the handshake described in docs/contracts.md.
package abkitv1
