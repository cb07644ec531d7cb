package mcpparser_test

import (
	"testing"

	"github.com/abkit/abkit/sdk/plugintest"
)

// Servers add events that are not MCP messages (ping keep-alives whose
// data is not JSON): skipped, not counted malformed.
func TestNonMessageEventsSkipped(t *testing.T) {
	body := "event: ping\ndata: ping\n\n" +
		"event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n" +
		"event: ping\ndata: ping\n\n" +
		"id: 2\ndata: \n\n"
	got, ok := drive(t, callBody, "text/event-stream", plugintest.Split([]byte(body), 3))
	if !ok || got.Malformed != 0 || len(got.Responses) != 1 || got.Responses[0].Text != "ok" {
		t.Fatalf("got %+v ok=%v", got, ok)
	}
}

// An A2A exchange is a2a-parser's: mcp-parser claims nothing.
func TestA2ANotClaimed(t *testing.T) {
	req := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"parts":[{"kind":"text","text":"hi"}]}}}`
	if got, ok := drive(t, req, "application/json", [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t","status":{"state":"completed"}}}`)}); ok {
		t.Errorf("claimed A2A: %+v", got)
	}
	// Without the request, the result's shape tells.
	if got, ok := drive(t, "", "text/event-stream", [][]byte{[]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"statusUpdate\":{\"taskId\":\"t\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n")}); ok {
		t.Errorf("claimed A2A 1.0: %+v", got)
	}
}
