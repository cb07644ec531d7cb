package mcpparser

import (
	_ "embed" // the extension's schema
	"encoding/json"

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

// spec is made once: the schema compacted as JSON carries it.
var spec = gateway.ExtensionSpec{Key: Key, Writes: true, Schema: json.RawMessage(gateway.CompactJSON(schema)),
	Description: "The MCP JSON-RPC calls of a request and the responses to them"}

// Capabilities: reads bodies, streams, and writes the "mcp" extension.
func (p *Parser) Capabilities() gateway.Capabilities {
	c := p.Parser.Capabilities()
	c.Extensions = []gateway.ExtensionSpec{Extension()}
	return c
}
