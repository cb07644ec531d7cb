package a2aparser_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/sdk/plugintest"
)

// A2A 1.0 over JSON-RPC: results wrapped as task / message / statusUpdate /
// artifactUpdate, TASK_STATE_* states (normalised to the 0.3 names).
const v1Req = `{"jsonrpc":"2.0","id":"q","method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"go"}]}}}`

const v1Stream = `data: {"jsonrpc":"2.0","id":"q","result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}

data: {"jsonrpc":"2.0","id":"q","result":{"message":{"messageId":"m2","role":"ROLE_AGENT","parts":[{"text":"on it"}]}}}

data: {"jsonrpc":"2.0","id":"q","result":{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"out"}]},"lastChunk":true}}}

data: {"jsonrpc":"2.0","id":"q","result":{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}}

`

// The HTTP+JSON binding: POST /message:stream, bare StreamResponse events.
const restStream = `data: {"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}

data: {"artifactUpdate": {"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": "# Report"}]}}}

data: {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}

`

func TestA2AVersions(t *testing.T) {
	tests := []struct {
		name, url, req, ct, body string
		want                     a2aparser.Result
	}{
		{"1.0 json-rpc stream", "/a2a", v1Req, "text/event-stream", v1Stream, a2aparser.Result{
			Method: "SendStreamingMessage", RequestID: `"q"`, RequestText: "go", Transport: "sse", TaskID: "t", ContextID: "c",
			State: "input-required", States: []string{"working", "input-required"},
			Artifacts: []a2aparser.Artifact{{ID: "a", Text: "out", Parts: 1, LastChunk: true}}, Messages: []string{"on it"}}},
		{"1.0 json-rpc body", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"hi"}]}}}`, "application/json",
			`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"done"}]}]}}}`,
			a2aparser.Result{Method: "SendMessage", RequestID: "1", RequestText: "hi", Transport: "json", TaskID: "t", ContextID: "c",
				State: "completed", States: []string{"completed"}, Final: true, Artifacts: []a2aparser.Artifact{{ID: "a", Text: "done", Parts: 1}}}},
		{"1.0 rest stream", "https://agent.example/message:stream", `{"message":{"role":"ROLE_USER","parts":[{"text":"report"}],"messageId":"m"}}`, "text/event-stream", restStream,
			a2aparser.Result{Method: "message:stream", RequestText: "report", Transport: "sse", TaskID: "t", ContextID: "c",
				State: "completed", States: []string{"working", "completed"}, Final: true, Artifacts: []a2aparser.Artifact{{ID: "a", Text: "# Report", Parts: 1}}}},
		{"1.0 rest body", "https://agent.example/message:send", `{"message":{"parts":[{"text":"x"}]}}`, "application/a2a+json",
			`{"task":{"id":"t","status":{"state":"TASK_STATE_FAILED"}}}`,
			a2aparser.Result{Method: "message:send", RequestText: "x", Transport: "json", TaskID: "t", State: "failed", States: []string{"failed"}, Final: true}},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 7, 1 << 20} {
			ctx := context.Background()
			p := plugintest.New(t, a2aparser.Factory(), "")
			r := plugintest.NewRun("POST", tt.url, []byte(tt.req))
			r.Request(ctx, p)
			r.Respond(200, tt.ct)
			r.Frames(ctx, plugintest.Split([]byte(tt.body), n), p)
			got, ok := a2aparser.FromExchange(r.Ex)
			if !ok || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s (%d-byte frames):\n got %+v\nwant %+v", tt.name, n, got, tt.want)
			}
		}
	}
}
