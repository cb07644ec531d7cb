package inferenceparser

import (
	_ "embed" // the extension's schema

	"github.com/abkit/abkit/sdk/gateway"
)

// schema is the JSON Schema of the "inference" extension (schema.json). The host
// checks every value the parser stores against it and refuses one that
// breaks it (docs/contracts.md, X1), so a reader can count on the shape.
//
//go:embed schema.json
var schema []byte

// Extension declares the "inference" extension the parser writes, with its
// schema; the parser's capabilities declare it (sse.NewParser).
func Extension() gateway.ExtensionSpec {
	return gateway.Writes(Key, schema, "What the parser read from an LLM request and its response")
}
