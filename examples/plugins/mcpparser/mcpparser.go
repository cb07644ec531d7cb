// Package mcpparser is the mcp-parser example plugin: a streaming parser of
// MCP (Model Context Protocol) JSON-RPC traffic, over SSE or as a JSON body.
//
// In OnRequest it reads the request body's JSON-RPC requests (method, and
// for tools/call the tool name and arguments) and stores them under the
// "mcp" extension, so that a later plugin such as tool-allowlist can decide
// on the request. At the last frame it adds what the response held: the
// JSON-RPC responses (result or error) and the requests and notifications
// the server sent along the stream. The result does not depend on how the
// response was chunked ([P19], P22) and keeps no borrowed bytes (P24).
//
// [P19]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package mcpparser

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/extension"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/jsonrpc"
	"github.com/abkit/abkit/sdk/sse"
)

// Name is the plugin's registered name.
const Name = "mcp-parser"

// Key is the extension key the result is stored under.
const Key = "mcp"

// Description is the one-line catalog description (P5).
const Description = "Parses MCP JSON-RPC requests and responses into the mcp extension"

// MethodToolsCall is the MCP method that calls a tool.
const MethodToolsCall = "tools/call"

// Result is the "mcp" extension.
type Result struct {
	// Requests are the JSON-RPC requests and notifications of the request
	// body, in order (a batch has several).
	Requests []Call `json:"requests,omitempty"`
	// Transport is how the response came: sse or json; empty before it.
	Transport string `json:"transport,omitempty"`
	// Responses are the JSON-RPC responses in the response, in order.
	Responses []Response `json:"responses,omitempty"`
	// ServerCalls are requests and notifications the server sent in the
	// response stream, such as notifications/progress.
	ServerCalls []Call `json:"server_calls,omitempty"`
	// Malformed counts events (or a body) that held no valid JSON-RPC.
	Malformed int `json:"malformed,omitempty"`
}

// Call is one JSON-RPC request or notification.
type Call struct {
	// ID is the id's JSON text; empty for a notification.
	ID     string `json:"id,omitempty"`
	Method string `json:"method"`
	// Name is params.name: the tool of tools/call, the prompt of
	// prompts/get.
	Name string `json:"name,omitempty"`
	// Arguments is params.arguments as compact JSON.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// URI is params.uri, as in resources/read.
	URI string `json:"uri,omitempty"`
}

// Response is one JSON-RPC response.
type Response struct {
	ID     string          `json:"id,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
	// IsError is a tool result's isError flag.
	IsError bool `json:"is_error,omitempty"`
	// Text joins the result's text content items with newlines.
	Text string `json:"text,omitempty"`
}

// ToolCalls returns the tools/call requests.
func (r Result) ToolCalls() []Call {
	var out []Call
	for _, c := range r.Requests {
		if c.Method == MethodToolsCall {
			out = append(out, c)
		}
	}
	return out
}

// FromExchange returns the "mcp" extension of ex, whether it is this
// package's Result or its JSON form from another process.
func FromExchange(ex *gateway.Exchange) (Result, bool) { return extension.Get[Result](ex, Key) }

// Factory registers the plugin. It takes no configuration.
func Factory() gateway.Factory {
	return gateway.Factory{
		Name: Name,
		New: func(json.RawMessage) (gateway.Plugin, error) {
			return &Parser{sse.NewParser[state](Name, Description, Extension())}, nil
		},
	}
}

// Parser is an mcp-parser instance, safe for concurrent exchanges: all
// per-exchange state lives on the exchange (P31).
type Parser struct {
	sse.Parser[state, *state]
}

var _ gateway.StreamingResponder = (*Parser)(nil)

// OnRequest records the request body's JSON-RPC calls.
func (p *Parser) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	st := p.Begin(ex)
	if body := ex.RequestBody(); len(body) > 0 {
		if msgs, err := jsonrpc.Parse(body); err == nil {
			for _, m := range msgs {
				if !m.V2() {
					continue // no JSON-RPC 2.0 envelope: not MCP
				}
				if jsonrpc.A2AMethod(m.Method) {
					st.foreign = true // A2A: a2a-parser's traffic
				}
				if m.Method != "" {
					st.res.Requests = append(st.res.Requests, toCall(m))
				}
			}
			st.seen = len(st.res.Requests) > 0 && !st.foreign
		}
	}
	if st.seen {
		ex.SetExtension(Key, st.res)
	}
	return gateway.Continue()
}

type state struct {
	res  Result
	seen bool
	// foreign: the exchange is another JSON-RPC protocol's (A2A), told by
	// its request method or its results' shape; it is never claimed.
	foreign bool
}

// Done stores the result, if the exchange held MCP traffic.
func (st *state) Done(ex *gateway.Exchange) {
	if st.seen && !st.foreign {
		ex.SetExtension(Key, st.res)
	}
}

// Event reads one SSE event's JSON-RPC data.
func (st *state) Event(ev sse.Event) {
	st.res.Transport = "sse"
	if strings.TrimSpace(ev.Data) == "" {
		return // MCP servers may prime a stream with an empty event
	}
	if ev.Event != "" && ev.Event != "message" {
		// MCP messages come as "message" events; servers add others (ping
		// keep-alives whose data is not JSON): skipped, not malformed.
		return
	}
	st.add(sse.Bytes(ev.Data)) // add copies what it keeps
}

// Body reads a JSON body.
func (st *state) Body(body []byte) {
	st.res.Transport = "json"
	st.add(body)
}

func (st *state) add(data []byte) {
	if !jsonrpc.MayHoldMessage(data) {
		// Parse would fail: counted the same, without its JSON check
		// (every event of an inference stream comes here).
		st.res.Malformed++
		return
	}
	msgs, err := jsonrpc.Parse(data)
	if err == nil {
		msgs = jsonrpc.V2Only(msgs) // only the 2.0 envelope is evidence of MCP
	}
	if err != nil || len(msgs) == 0 {
		// Counted, but only JSON-RPC makes the exchange MCP traffic.
		st.res.Malformed++
		return
	}
	if st.foreign {
		return
	}
	for _, m := range msgs {
		if jsonrpc.A2AMethod(m.Method) || (!st.seen && m.IsResponse() && jsonrpc.A2AResult(m.Result)) {
			st.foreign, st.seen = true, false
			return
		}
	}
	st.seen = true
	for _, m := range msgs {
		if !m.IsResponse() {
			st.res.ServerCalls = append(st.res.ServerCalls, toCall(m))
			continue
		}
		r := Response{ID: m.ID, Result: m.Result, Error: m.Error}
		var tr struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(m.Result, &tr) == nil {
			r.IsError = tr.IsError
			var texts []string
			for _, c := range tr.Content {
				if c.Type == "text" {
					texts = append(texts, c.Text)
				}
			}
			r.Text = strings.Join(texts, "\n")
		}
		st.res.Responses = append(st.res.Responses, r)
	}
}

func toCall(m jsonrpc.Message) Call {
	c := Call{ID: m.ID, Method: m.Method}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		URI       string          `json:"uri"`
	}
	if len(m.Params) > 0 && m.Params[0] == '{' && json.Unmarshal(m.Params, &p) == nil {
		c.Name, c.Arguments, c.URI = p.Name, p.Arguments, p.URI
	}
	return c
}

// Plugin bundles the factory for the catalog and for serving as a binary.
func Plugin() sdk.Plugin {
	f := Factory()
	return sdk.Plugin{Name: Name, Description: Description, Pipeline: &f}
}
