package a2aparser

import (
	_ "embed" // the extension's schema

	"github.com/abkit/abkit/sdk/gateway"
)

// schema is the JSON Schema of the "a2a" extension (schema.json). The host
// checks every value the parser stores against it and refuses one that
// breaks it (docs/contracts.md, X1), so a reader can count on the shape.
//
//go:embed schema.json
var schema []byte

// Extension declares the "a2a" extension the parser writes, with its
// schema; the parser's capabilities declare it (sse.NewParser).
func Extension() gateway.ExtensionSpec {
	return gateway.Writes(Key, schema, "An A2A task's request, states, artifacts and messages")
}
