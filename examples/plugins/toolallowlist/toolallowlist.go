// Package toolallowlist is the tool-allowlist example plugin: it rejects an
// MCP tools/call with 403 unless the tool is in its allow list. It decides
// in OnRequest on the request that mcp-parser parsed, so it requires
// mcp-parser earlier in the chain ([P7]) and reads no body itself.
//
// [P7]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package toolallowlist

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
)

// Name is the plugin's registered name.
const Name = "tool-allowlist"

// Description is the one-line catalog description (P5).
const Description = "Rejects MCP tool calls whose tool is not in the allow list"

// Config is the plugin's configuration block.
type Config struct {
	// Allow lists the tool names that may be called; an empty list allows
	// none.
	Allow []string `json:"allow"`
}

// Schema describes Config.
var schema = &gateway.ConfigSchema{Fields: []gateway.Field{
	{Name: "allow", Type: "array", Required: true, Description: "Tool names an MCP tools/call may name; others get 403"},
}}

// Schema returns the configuration schema.
func Schema() *gateway.ConfigSchema { return schema }

// Factory registers the plugin.
func Factory() gateway.Factory {
	return config.Factory(Name, schema, New)
}

// New makes an instance from a decoded config.
func New(c Config) (*Allowlist, error) {
	allow := make(map[string]bool, len(c.Allow))
	for i, name := range c.Allow {
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("%s config: allow[%d] is empty; list tool names", Name, i)
		}
		allow[name] = true
	}
	list := slices.Clone(c.Allow)
	slices.Sort(list)
	return &Allowlist{allow: allow, list: strings.Join(slices.Compact(list), ", ")}, nil
}

// Allowlist is a tool-allowlist instance; it is read-only after New and safe
// for concurrent exchanges.
type Allowlist struct {
	allow map[string]bool
	list  string
}

// Name returns "tool-allowlist".
func (*Allowlist) Name() string { return Name }

// Capabilities: requires mcp-parser.
func (*Allowlist) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Requires: []string{mcpparser.Name}, Description: Description,
		Extensions: []gateway.ExtensionSpec{{Key: mcpparser.Key, Reads: true, Description: "the tools/call requests to check"}}}
}

// OnRequest rejects the first tools/call of a tool outside the list.
// Traffic that is not MCP passes.
func (p *Allowlist) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	res, ok := mcpparser.FromExchange(ex)
	if !ok {
		return gateway.Continue()
	}
	for _, call := range res.ToolCalls() {
		if !p.allow[call.Name] {
			allowed := p.list
			if allowed == "" {
				allowed = "none"
			}
			return gateway.Reject(403, fmt.Sprintf("tool %q is not allowed; allowed tools: %s", call.Name, allowed))
		}
	}
	return gateway.Continue()
}

// OnResponse does nothing.
func (*Allowlist) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// Plugin bundles the factory for the catalog and for serving as a binary.
// The bundle is the one place for the name and description
// (sdk.PipelinePlugin).
func Plugin() sdk.Plugin {
	return sdk.PipelinePlugin(Name, Description, Factory())
}
