package mcpparser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/jsonrpc"
	"github.com/abkit/abkit/sdk/plugintest"
)

const callBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{ "city" : "Paris" }}}`

const sseResponse = "event: message\n" +
	`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":50}}` + "\n\n" +
	"event: message\nid: 2\n" +
	`data: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Sunny"},{"type":"image","data":"x"},{"type":"text","text":"21°C"}],"isError":false}}` + "\n\n"

func drive(t *testing.T, reqBody, contentType string, chunks [][]byte) (mcpparser.Result, bool) {
	t.Helper()
	ctx := context.Background()
	p := plugintest.New(t, mcpparser.Factory(), "")
	r := plugintest.NewRun("POST", "/mcp", []byte(reqBody))
	r.Request(ctx, p)
	r.Respond(200, contentType)
	r.Frames(ctx, chunks, p)
	return mcpparser.FromExchange(r.Ex)
}

// The request is available to later plugins during OnRequest.
func TestRequestParsedInOnRequest(t *testing.T) {
	ctx := context.Background()
	p := plugintest.New(t, mcpparser.Factory(), "")
	r := plugintest.NewRun("POST", "/mcp", []byte(callBody))
	r.Request(ctx, p)
	got, ok := mcpparser.FromExchange(r.Ex)
	want := mcpparser.Result{Requests: []mcpparser.Call{{ID: "7", Method: "tools/call", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v (ok=%v), want %+v", got, ok, want)
	}
	if tc := got.ToolCalls(); len(tc) != 1 || tc[0].Name != "get_weather" {
		t.Fatalf("ToolCalls() = %+v", tc)
	}
}

// P19 P24: the SSE response gives the same result for every chunking.
func TestSSEChunkingIndependent_P19_P24(t *testing.T) {
	want := mcpparser.Result{
		Requests:    []mcpparser.Call{{ID: "7", Method: "tools/call", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
		Transport:   "sse",
		ServerCalls: []mcpparser.Call{{Method: "notifications/progress"}},
		Responses: []mcpparser.Response{{
			ID:     "7",
			Result: json.RawMessage(`{"content":[{"type":"text","text":"Sunny"},{"type":"image","data":"x"},{"type":"text","text":"21°C"}],"isError":false}`),
			Text:   "Sunny\n21°C",
		}},
	}
	body := []byte(sseResponse)
	cases := map[string][][]byte{"whole": {body}, "per-byte": plugintest.Split(body, 1), "13-bytes": plugintest.Split(body, 13)}
	for seed := range uint64(4) {
		cases[fmt.Sprintf("random-%d", seed)] = plugintest.SplitRandom(body, seed)
	}
	for name, chunks := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := drive(t, callBody, "text/event-stream", chunks)
			if !ok || !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v (ok=%v)\nwant %+v", got, ok, want)
			}
		})
	}
}

// P22: a JSON body arrives as one frame with last=true; errors and tool
// errors are recorded.
func TestJSONBody_P22(t *testing.T) {
	resp := `[{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}},{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"boom"}],"isError":true}}]`
	req := `[{"jsonrpc":"2.0","id":1,"method":"nope"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail"}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`
	got, ok := drive(t, req, "application/json", [][]byte{}) // nothing streamed ...
	if !ok || got.Transport != "" || len(got.Requests) != 3 {
		t.Fatalf("after an empty response: %+v ok=%v", got, ok)
	}
	ctx := context.Background()
	p := plugintest.New(t, mcpparser.Factory(), "")
	r := plugintest.NewRun("POST", "/mcp", []byte(req))
	r.Request(ctx, p)
	r.Respond(200, "application/json")
	buf := []byte(resp)
	r.Ctl.Enter(p.Name(), gateway.PhaseFrame, false, false)
	p.(gateway.StreamingResponder).OnResponseFrame(ctx, r.Ex, buf, true)
	for i := range buf {
		buf[i] = 0 // P24
	}
	got, _ = mcpparser.FromExchange(r.Ex)
	want := []mcpparser.Response{
		{ID: "1", Error: &jsonrpc.Error{Code: -32601, Message: "Method not found"}},
		{ID: "2", Result: json.RawMessage(`{"content":[{"type":"text","text":"boom"}],"isError":true}`), IsError: true, Text: "boom"},
	}
	if got.Transport != "json" || !reflect.DeepEqual(got.Responses, want) {
		t.Fatalf("got %+v", got)
	}
	if tc := got.ToolCalls(); len(tc) != 1 || tc[0].Name != "fail" || tc[0].ID != "2" {
		t.Fatalf("ToolCalls() = %+v", tc)
	}
	if got.Requests[2].ID != "" {
		t.Fatalf("a notification has no id: %+v", got.Requests[2])
	}
}

// A body that is not JSON-RPC sets no extension; a malformed event is
// counted, not fatal.
func TestNotMCPAndMalformed(t *testing.T) {
	if _, ok := drive(t, `{"model":"x"}`, "application/json", [][]byte{[]byte(`{"choices":[]}`)}); ok {
		t.Fatal("extension set for non-MCP traffic")
	}
	got, ok := drive(t, callBody, "text/event-stream", [][]byte{[]byte("data: {oops\n\n")})
	if !ok || got.Malformed != 1 {
		t.Fatalf("got %+v ok=%v", got, ok)
	}
}

// P5, P2.
func TestDescription_P2_P5(t *testing.T) {
	a, b := plugintest.New(t, mcpparser.Factory(), ""), plugintest.New(t, mcpparser.Factory(), "")
	if err := gateway.CheckDescription(a.Capabilities().Description); err != nil {
		t.Fatal(err)
	}
	if !a.Capabilities().Equal(b.Capabilities()) {
		t.Fatal("capabilities differ between instances")
	}
}
