package a2aparser_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
)

const streamReq = `{"jsonrpc":"2.0","id":"r1","method":"message/stream","params":{"message":{"role":"user","kind":"message","messageId":"m1","parts":[{"kind":"text","text":"Write a haiku"}]}}}`

const stream = `data: {"jsonrpc":"2.0","id":"r1","result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted"}}}

data: {"jsonrpc":"2.0","id":"r1","result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working","message":{"role":"agent","parts":[{"kind":"text","text":"Thinking"}]}},"final":false}}

data: {"jsonrpc":"2.0","id":"r1","result":{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","name":"haiku","parts":[{"kind":"text","text":"Old pond, "}]},"append":false,"lastChunk":false}}

data: {"jsonrpc":"2.0","id":"r1","result":{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"kind":"text","text":"frog jumps in"}]},"append":true,"lastChunk":true}}

data: {"jsonrpc":"2.0","id":"r1","result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}

`

func drive(t *testing.T, contentType string, chunks [][]byte) (a2aparser.Result, bool) {
	t.Helper()
	ctx := context.Background()
	p := plugintest.New(t, a2aparser.Factory(), "")
	r := plugintest.NewRun("POST", "/a2a", []byte(streamReq))
	r.Request(ctx, p)
	if got, ok := a2aparser.FromExchange(r.Ex); !ok || got.Method != "message/stream" || got.RequestText != "Write a haiku" || got.RequestID != `"r1"` {
		t.Fatalf("after OnRequest: %+v ok=%v", got, ok)
	}
	r.Respond(200, contentType)
	r.Frames(ctx, chunks, p)
	return a2aparser.FromExchange(r.Ex)
}

// P19 P24: status and artifact updates fold to the same result for every
// chunking.
func TestStreamChunkingIndependent_P19_P24(t *testing.T) {
	want := a2aparser.Result{
		Method: "message/stream", RequestID: `"r1"`, RequestText: "Write a haiku",
		Transport: "sse", TaskID: "t1", ContextID: "c1",
		State: "completed", States: []string{"submitted", "working", "completed"}, Final: true,
		Artifacts: []a2aparser.Artifact{{ID: "a1", Name: "haiku", Text: "Old pond, frog jumps in", Parts: 2, LastChunk: true}},
		Messages:  []string{"Thinking"},
	}
	body := []byte(stream)
	cases := map[string][][]byte{"whole": {body}, "per-byte": plugintest.Split(body, 1), "11-bytes": plugintest.Split(body, 11)}
	for seed := range uint64(4) {
		cases[fmt.Sprintf("random-%d", seed)] = plugintest.SplitRandom(body, seed)
	}
	for name, chunks := range cases {
		for _, ct := range []string{"text/event-stream", ""} {
			t.Run(name+"/"+ct, func(t *testing.T) {
				got, ok := drive(t, ct, chunks)
				if !ok || !reflect.DeepEqual(got, want) {
					t.Fatalf("got  %+v (ok=%v)\nwant %+v", got, ok, want)
				}
			})
		}
	}
}

// P22: a JSON body (message/send answered with a whole task) in one frame;
// a non-append artifact update replaces the artifact.
func TestJSONBody_P22(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":"r1","result":{"kind":"task","id":"t2","contextId":"c2","status":{"state":"failed","message":{"parts":[{"kind":"text","text":"quota"}]}},"artifacts":[{"artifactId":"x","parts":[{"kind":"text","text":"a"},{"kind":"data","data":{}}]}]}}`
	got, ok := drive(t, "application/json", [][]byte{[]byte(body)})
	want := a2aparser.Result{
		Method: "message/stream", RequestID: `"r1"`, RequestText: "Write a haiku",
		Transport: "json", TaskID: "t2", ContextID: "c2", State: "failed", States: []string{"failed"}, Final: true,
		Artifacts: []a2aparser.Artifact{{ID: "x", Text: "a", Parts: 2}},
		Messages:  []string{"quota"},
	}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}

	replace := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"kind\":\"artifact-update\",\"taskId\":\"t\",\"artifact\":{\"artifactId\":\"a\",\"parts\":[{\"kind\":\"text\",\"text\":\"one\"}]}}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"kind\":\"artifact-update\",\"taskId\":\"t\",\"artifact\":{\"artifactId\":\"a\",\"parts\":[{\"kind\":\"text\",\"text\":\"two\"}]}}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32001,\"message\":\"Task not found\"}}\n\n"
	got, _ = drive(t, "text/event-stream", [][]byte{[]byte(replace)})
	if len(got.Artifacts) != 1 || got.Artifacts[0].Text != "two" || got.Artifacts[0].Parts != 1 || got.Error == nil || got.Error.Code != -32001 {
		t.Fatalf("got %+v", got)
	}
}

// P5, P2.
func TestDescription_P2_P5(t *testing.T) {
	a, b := plugintest.New(t, a2aparser.Factory(), ""), plugintest.New(t, a2aparser.Factory(), "")
	if err := gateway.CheckDescription(a.Capabilities().Description); err != nil {
		t.Fatal(err)
	}
	if !a.Capabilities().Equal(b.Capabilities()) {
		t.Fatal("capabilities differ between instances")
	}
}
