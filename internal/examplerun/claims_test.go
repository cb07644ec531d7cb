package examplerun_test

import (
	"testing"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/internal/replay/fixture"
)

// With all three parsers in one chain, each protocol's traffic is claimed
// by its parser alone (vectors written here; TestExternalCaptures does the
// same over real captures when they are present).
func TestEachParserClaimsOnlyItsTraffic(t *testing.T) {
	for _, tc := range []struct {
		parser, url, req, kind, body string
	}{
		{inferenceparser.Name, "https://api.openai.com/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "sse",
			"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"},
		{inferenceparser.Name, "https://api.openai.com/v1/responses", `{"model":"m","input":"hi","stream":true}`, "sse",
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"hi\"}\n\n"},
		{inferenceparser.Name, "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"hi"}]}]}`, "sse",
			"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n"},
		{mcpparser.Name, "https://mcp.example/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, "sse",
			"event: ping\ndata: ping\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n"},
		{mcpparser.Name, "https://mcp.example/mcp", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "json", `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{a2aparser.Name, "https://agent.example/a2a", `{"jsonrpc":"2.0","id":"q","method":"message/stream","params":{"message":{"parts":[{"kind":"text","text":"go"}]}}}`, "sse",
			"data: {\"jsonrpc\":\"2.0\",\"id\":\"q\",\"result\":{\"kind\":\"status-update\",\"taskId\":\"t\",\"status\":{\"state\":\"completed\"},\"final\":true}}\n\n"},
		{a2aparser.Name, "https://agent.example/message:stream", `{"message":{"parts":[{"text":"go"}]}}`, "sse",
			"data: {\"statusUpdate\": {\"taskId\": \"t\", \"status\": {\"state\": \"TASK_STATE_COMPLETED\"}}}\n\n"},
	} {
		t.Run(tc.parser+" "+tc.url, func(t *testing.T) {
			req, err := fixture.ParseRequest("req", []byte("POST "+tc.url+"\nContent-Type: application/json\n\n"+tc.req))
			if err != nil {
				t.Fatal(err)
			}
			checkParsers(t, manifestCapture{ID: "vector", Kind: tc.kind, Parser: tc.parser, Protocol: tc.parser}, []byte(tc.body), &req)
		})
	}
}
