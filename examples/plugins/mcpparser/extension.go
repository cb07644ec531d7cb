package mcpparser

import (
	_ "embed" // the extension's schema

	"github.com/abkit/abkit/sdk/gateway"
)

// schema is the JSON Schema of the "mcp" extension (schema.json). The host
// checks every value the parser stores against it and refuses one that
// breaks it (docs/contracts.md, X1), so a reader can count on the shape.
//
//go:embed schema.json
var schema []byte

// Extension declares the "mcp" extension the parser writes, with its
// schema.
func Extension() gateway.ExtensionSpec { return spec }

var spec = gateway.Writes(Key, schema, "The MCP JSON-RPC calls of a request and the responses to them")

// Capabilities: reads bodies, streams, and writes the "mcp" extension.
func (p *Parser) Capabilities() gateway.Capabilities {
	c := p.Parser.Capabilities()
	c.Extensions = []gateway.ExtensionSpec{Extension()}
	return c
}
