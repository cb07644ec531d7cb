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
// schema.
func Extension() gateway.ExtensionSpec { return spec }

var spec = gateway.Writes(Key, schema, "What the parser read from an LLM request and its response")

// Capabilities: reads bodies, streams, and writes the "inference" extension.
func (p *Parser) Capabilities() gateway.Capabilities {
	c := p.Parser.Capabilities()
	c.Extensions = []gateway.ExtensionSpec{Extension()}
	return c
}
