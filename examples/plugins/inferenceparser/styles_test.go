package inferenceparser_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/sdk/plugintest"
)

// Vectors written here in the shapes of the providers' published streams.

const responsesStream = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-4.1","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel"}

event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"lo"}

event: response.output_item.done
data: {"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","content":[{"type":"output_text","text":"Hello"}]}}

event: response.output_item.added
data: {"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_9","name":"get_weather","arguments":""}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"city\":"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"\"Oslo\"}"}

event: response.completed
data: {"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1","usage":{"input_tokens":9,"output_tokens":4,"total_tokens":13}}}

`

const geminiStream = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Let me think\",\"thought\": true}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"totalTokenCount\": 5},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r-1\"}\r\n\r\n" +
	"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Hi \"},{\"functionCall\": {\"name\": \"lookup\",\"args\": {\"q\": \"x\"}}}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"candidatesTokenCount\": 3,\"totalTokenCount\": 8},\"modelVersion\": \"gemini-2.5-flash\"}\r\n\r\n"

// A Gemini stream that fails mid-way: the error object is written into the
// stream outside any data: line, as an unterminated final block. It is not
// an event: the runtime relays it without dispatching it (P19), so the
// parser, which sees the same frames, never reports it; the stream shows
// as one that never finished.
const geminiError = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"par\"}],\"role\": \"model\"},\"index\": 0}]}\n\n" +
	"{\n  \"error\": {\n    \"code\": 499,\n    \"message\": \"The operation was cancelled.\",\n    \"status\": \"CANCELLED\"\n  }\n}\n"

const anthropicRefusal = `event: message_start
data: {"type":"message_start","message":{"id":"msg_r","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"compaction","content":"summary"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null,"stop_details":{"type":"refusal","category":"cyber","explanation":null}},"usage":{"output_tokens":2}}

event: message_stop
data: {"type":"message_stop"}

`

const chatRefusal = `data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""},"logprobs":{"content":null,"refusal":[]},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"refusal":"I can't help"},"logprobs":{"content":null,"refusal":[{"token":"I","logprob":-0.1,"bytes":[73],"top_logprobs":[]}]},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}

data: [DONE]

`

func TestStyles(t *testing.T) {
	tests := []struct {
		name, ct, body string
		want           inferenceparser.Result
	}{
		{"responses stream", "text/event-stream", responsesStream, inferenceparser.Result{
			Style: "responses", Transport: "sse", ID: "resp_1", Model: "gpt-4.1", Content: "Hello",
			ToolCalls:    []inferenceparser.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: `{"city":"Oslo"}`}},
			FinishReason: "completed", Usage: &inferenceparser.Usage{InputTokens: 9, OutputTokens: 4, TotalTokens: 13},
			Done: true, Events: 9}},
		{"responses body", "application/json", `{"id":"resp_2","object":"response","status":"completed","model":"gpt-4.1","output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}]},{"type":"message","content":[{"type":"output_text","text":"Hi"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"web_search_call"},{"type":"computer_call_v9"}],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`,
			inferenceparser.Result{Style: "responses", Transport: "json", ID: "resp_2", Model: "gpt-4.1", Content: "Hi", Reasoning: "hmm",
				ToolCalls: []inferenceparser.ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}, FinishReason: "completed", UnknownBlocks: 1,
				ServerToolCalls: []inferenceparser.ServerToolCall{{Type: "web_search_call"}},
				Usage:           &inferenceparser.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}, Done: true}},
		{"gemini stream", "text/event-stream", geminiStream, inferenceparser.Result{
			Style: "gemini", Transport: "sse", ID: "r-1", Model: "gemini-2.5-flash", Content: "Hi ", Reasoning: "Let me think",
			ToolCalls: []inferenceparser.ToolCall{{Name: "lookup", Arguments: `{"q":"x"}`}}, FinishReason: "STOP",
			Usage: &inferenceparser.Usage{InputTokens: 5, OutputTokens: 3, TotalTokens: 8}, Done: true, Events: 2}},
		{"gemini body", "application/json", `{"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}`,
			inferenceparser.Result{Style: "gemini", Transport: "json", Content: "ok", FinishReason: "MAX_TOKENS",
				Usage: &inferenceparser.Usage{InputTokens: 1, OutputTokens: 1, TotalTokens: 2}, Done: true}},
		{"gemini error outside data", "text/event-stream", geminiError, inferenceparser.Result{
			Style: "gemini", Transport: "sse", Content: "par", Events: 1}},
		{"anthropic stop_details and unknown block", "text/event-stream", anthropicRefusal, inferenceparser.Result{
			Style: "messages", Transport: "sse", ID: "msg_r", Model: "claude-x", FinishReason: "refusal",
			StopDetails: []byte(`{"type":"refusal","category":"cyber","explanation":null}`), UnknownBlocks: 1,
			Usage: &inferenceparser.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}, Done: true, Events: 5}},
		{"chat refusal and logprobs", "text/event-stream", chatRefusal, inferenceparser.Result{
			Style: "chat-completions", Transport: "sse", ID: "c1", Model: "gpt-4o", Refusal: "I can't help", Logprobs: true,
			FinishReason: "stop", Done: true, Events: 4}},
	}
	for _, tt := range tests {
		for name, chunks := range chunkings(t, []byte(tt.body)) {
			if tt.ct != "text/event-stream" && name != "whole" && name != "7-bytes" {
				continue
			}
			got, ok := run(t, tt.ct, chunks)
			if !ok {
				t.Fatalf("%s/%s: no result", tt.name, name)
			}
			got.Request = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s/%s:\n got %+v\nwant %+v", tt.name, name, got, tt.want)
			}
		}
	}
}

// JSON-RPC traffic and another protocol's keep-alives are not inference:
// nothing is claimed, nothing counted malformed.
func TestNotInference(t *testing.T) {
	ctx := context.Background()
	p := plugintest.New(t, inferenceparser.Factory(), "")
	r := plugintest.NewRun("POST", "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	r.Request(ctx, p)
	r.Respond(200, "text/event-stream")
	r.Frames(ctx, [][]byte{[]byte("event: ping\ndata: ping\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"no\"}}\n\n")}, p)
	if got, ok := inferenceparser.FromExchange(r.Ex); ok {
		t.Errorf("claimed MCP traffic: %+v", got)
	}
}

// The request side of the Responses API and Gemini, recorded in OnRequest.
func TestRequestStyles(t *testing.T) {
	for _, tc := range []struct {
		body string
		want *inferenceparser.Request
	}{
		{`{"model":"gpt-4.1","instructions":"be brief","input":"hi","stream":true}`,
			&inferenceparser.Request{Model: "gpt-4.1", Stream: true, System: "be brief", Messages: []inferenceparser.Message{{Role: "user", Text: "hi"}}}},
		{`{"model":"gpt-4.1","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call_output","call_id":"c","output":"x"}]}`,
			&inferenceparser.Request{Model: "gpt-4.1", Messages: []inferenceparser.Message{{Role: "user", Text: "a"}}}},
		{`{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"q1"},{"text":"q2"}]}]}`,
			&inferenceparser.Request{System: "sys", Messages: []inferenceparser.Message{{Role: "user", Text: "q1\nq2"}}}},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"model":"x"}}`, nil},
	} {
		ctx := context.Background()
		p := plugintest.New(t, inferenceparser.Factory(), "")
		r := plugintest.NewRun("POST", "/", []byte(tc.body))
		r.Request(ctx, p)
		got, ok := inferenceparser.FromExchange(r.Ex)
		if tc.want == nil {
			if ok {
				t.Errorf("%s: claimed: %+v", tc.body, got)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got.Request, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.body, got.Request, tc.want)
		}
	}
}

// A Responses stream that streams its reasoning summary, then finishes the
// reasoning item with the same summary: counted once.
const responsesReasoning = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_r","object":"response","status":"in_progress","model":"o4-mini","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Weighing** the"}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":" options"}

event: response.reasoning_summary_text.done
data: {"type":"response.reasoning_summary_text.done","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"text":"**Weighing** the options"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Weighing** the options"}]}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Pick B."}

event: response.completed
data: {"type":"response.completed","sequence_number":7,"response":{"id":"resp_r","object":"response","status":"completed","model":"o4-mini","usage":{"input_tokens":5,"output_tokens":20,"total_tokens":25}}}

`

// The Responses API's top-level error event: code and message at the top
// level, a string where Anthropic's events have a message object.
const responsesError = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","object":"response","status":"in_progress","model":"gpt-4.1","output":[]}}

event: error
data: {"type":"error","sequence_number":1,"code":"server_error","message":"The server had an error while processing your request.","param":null}

`

func TestResponsesReasoningAndErrorEvent(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       inferenceparser.Result
	}{
		{"reasoning summary once", responsesReasoning, inferenceparser.Result{
			Style: "responses", Transport: "sse", ID: "resp_r", Model: "o4-mini", Content: "Pick B.", Reasoning: "**Weighing** the options",
			FinishReason: "completed", Usage: &inferenceparser.Usage{InputTokens: 5, OutputTokens: 20, TotalTokens: 25}, Done: true, Events: 8}},
		{"error event", responsesError, inferenceparser.Result{
			Style: "responses", Transport: "sse", ID: "resp_e", Model: "gpt-4.1",
			Error: "server_error: The server had an error while processing your request.", Events: 2}},
	} {
		for name, chunks := range chunkings(t, []byte(tt.body)) {
			got, ok := run(t, "text/event-stream", chunks)
			if !ok {
				t.Fatalf("%s/%s: no result", tt.name, name)
			}
			got.Request = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s/%s:\n got %+v\nwant %+v", tt.name, name, got, tt.want)
			}
		}
	}
}

// Logprobs is reported only when some chunk carries log probabilities:
// servers send an empty logprobs object on every chunk when none were
// asked for.
func TestLogprobsPresence(t *testing.T) {
	const nullChunk = `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hi"},"logprobs":{"content":null,"refusal":null},"finish_reason":null}]}` + "\n\n"
	for _, tt := range []struct {
		name, body string
		want       bool
	}{
		{"chat, empty logprobs objects", nullChunk + nullChunk + "data: [DONE]\n\n", false},
		{"chat, empty lists", `data: {"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[],"refusal":[]}}]}` + "\n\n", false},
		{"chat, one token", nullChunk + `data: {"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[{"token":"a","logprob":-0.5,"bytes":[97],"top_logprobs":[]}],"refusal":null}}]}` + "\n\n", true},
		{"legacy completions", `data: {"object":"text_completion","choices":[{"index":0,"text":"a","logprobs":{"tokens":["a"],"token_logprobs":[-0.2]}}]}` + "\n\n", true},
		{"responses, no tokens", "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"a\",\"logprobs\":[]}\n\n", false},
		{"responses, tokens", "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"a\",\"logprobs\":[{\"token\":\"a\",\"logprob\":-0.1,\"bytes\":[97],\"top_logprobs\":[]}]}\n\n", true},
		{"responses item", "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"a\",\"logprobs\":[{\"token\":\"a\",\"logprob\":-0.1}]}]}}\n\n", true},
	} {
		got, ok := run(t, "text/event-stream", [][]byte{[]byte(tt.body)})
		if !ok || got.Logprobs != tt.want || got.Malformed != 0 {
			t.Errorf("%s: claimed %v, logprobs %v (want %v), malformed %d", tt.name, ok, got.Logprobs, tt.want, got.Malformed)
		}
	}
}
