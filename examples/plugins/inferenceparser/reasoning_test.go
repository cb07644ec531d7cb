package inferenceparser_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/sdk/plugintest"
)

// Vectors written here in the shapes of OpenAI-compatible servers
// (OpenRouter, Groq, DeepSeek, vLLM), Mistral, Anthropic's server tools and
// the Responses API's MCP calls.

const openRouterReasoning = `: OPENROUTER PROCESSING

data: {"id":"gen-1","provider":"Groq","model":"qwen/qwen3-32b","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"The user"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1","provider":"Groq","model":"qwen/qwen3-32b","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":" greets."},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1","provider":"Groq","model":"qwen/qwen3-32b","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello!","reasoning":null},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}]}

data: {"id":"gen-1","provider":"Groq","model":"qwen/qwen3-32b","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":{"prompt_tokens":10,"completion_tokens":30,"total_tokens":40,"completion_tokens_details":{"reasoning_tokens":25}}}

data: [DONE]

`

// vLLM sends the reasoning under both names in one delta: counted once.
const vllmBothNames = `data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1,"model":"deepseek-r1","choices":[{"index":0,"delta":{"reasoning_content":"Think","reasoning":"Think"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-v","object":"chat.completion.chunk","created":1,"model":"deepseek-r1","choices":[{"index":0,"delta":{"content":"Done"},"logprobs":null,"finish_reason":"stop"}]}

data: [DONE]

`

const mistralThinking = `data: {"id":"m1","object":"chat.completion.chunk","created":1,"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Okay, the"}]}]},"finish_reason":null}]}

data: {"id":"m1","object":"chat.completion.chunk","created":1,"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":" user asks."}]}]},"finish_reason":null}]}

data: {"id":"m1","object":"chat.completion.chunk","created":1,"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":"Paris."},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"total_tokens":20,"completion_tokens":12}}

data: [DONE]

`

const legacyFunctionCall = `data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-3.5-turbo-0613","choices":[{"index":0,"delta":{"role":"assistant","content":null,"function_call":{"name":"get_weather","arguments":""}},"finish_reason":null}]}

data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-3.5-turbo-0613","choices":[{"index":0,"delta":{"function_call":{"arguments":"{\"city\""}},"finish_reason":null}]}

data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-3.5-turbo-0613","choices":[{"index":0,"delta":{"function_call":{"arguments":":\"Rome\"}"}},"finish_reason":null}]}

data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-3.5-turbo-0613","choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}

data: [DONE]

`

const anthropicServerTools = `event: message_start
data: {"type":"message_start","message":{"id":"msg_s","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":20,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"weather"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" Oslo\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","title":"Oslo","url":"https://weather.example/oslo"}]}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"mcp_tool_use","id":"mcptoolu_1","name":"lookup","server_name":"docs","input":{"q":"sse"}}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: content_block_start
data: {"type":"content_block_start","index":3,"content_block":{"type":"mcp_tool_result","tool_use_id":"mcptoolu_1","is_error":false,"content":[{"type":"text","text":"found"}]}}

event: content_block_stop
data: {"type":"content_block_stop","index":3}

event: content_block_start
data: {"type":"content_block_start","index":4,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"Cold."}}

event: content_block_stop
data: {"type":"content_block_stop","index":4}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9,"server_tool_use":{"web_search_requests":1}}}

event: message_stop
data: {"type":"message_stop"}

`

const responsesMCP = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_m","object":"response","status":"in_progress","model":"gpt-4.1","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"mcp_1","type":"mcp_call","server_label":"docs","name":"lookup","arguments":"","status":"in_progress"}}

event: response.mcp_call_arguments.delta
data: {"type":"response.mcp_call_arguments.delta","sequence_number":2,"output_index":0,"item_id":"mcp_1","delta":"{\"q\":\"sse\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"id":"mcp_1","type":"mcp_call","server_label":"docs","name":"lookup","arguments":"{\"q\":\"sse\"}","output":"found","error":null,"status":"completed"}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Found it."}

event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_m","object":"response","status":"completed","model":"gpt-4.1","usage":{"input_tokens":7,"output_tokens":12,"total_tokens":19,"output_tokens_details":{"reasoning_tokens":4}}}}

`

const geminiThoughtTokens = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"plan\",\"thought\": true}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 4,\"totalTokenCount\": 4}}\r\n\r\n" +
	"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Yes.\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 4,\"candidatesTokenCount\": 2,\"totalTokenCount\": 30,\"thoughtsTokenCount\": 24}}\r\n\r\n"

// An OpenAI-compatible server reporting an upstream failure mid-stream.
const chatErrorMidStream = `data: {"id":"gen-e","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"par"},"finish_reason":null}]}

data: {"id":"gen-e","object":"chat.completion.chunk","created":1,"model":"m","error":{"code":502,"message":"Upstream provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}

data: [DONE]

`

func TestReasoningServerToolsAndLegacyCalls(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       inferenceparser.Result
	}{
		{"openrouter reasoning", openRouterReasoning, inferenceparser.Result{
			Style: "chat-completions", Transport: "sse", ID: "gen-1", Model: "qwen/qwen3-32b", Content: "Hello!", Reasoning: "The user greets.",
			FinishReason: "stop", Usage: &inferenceparser.Usage{InputTokens: 10, OutputTokens: 30, TotalTokens: 40, ReasoningTokens: 25}, Done: true, Events: 5}},
		{"vllm both names", vllmBothNames, inferenceparser.Result{
			Style: "chat-completions", Transport: "sse", ID: "chatcmpl-v", Model: "deepseek-r1", Content: "Done", Reasoning: "Think",
			FinishReason: "stop", Done: true, Events: 3}},
		{"mistral thinking", mistralThinking, inferenceparser.Result{
			Style: "chat-completions", Transport: "sse", ID: "m1", Model: "magistral-medium-latest", Content: "Paris.", Reasoning: "Okay, the user asks.",
			FinishReason: "stop", Usage: &inferenceparser.Usage{InputTokens: 8, OutputTokens: 12, TotalTokens: 20}, Done: true, Events: 4}},
		{"legacy function_call", legacyFunctionCall, inferenceparser.Result{
			Style: "chat-completions", Transport: "sse", ID: "c2", Model: "gpt-3.5-turbo-0613",
			ToolCalls:    []inferenceparser.ToolCall{{Name: "get_weather", Arguments: `{"city":"Rome"}`}},
			FinishReason: "function_call", Done: true, Events: 5}},
		{"anthropic server tools", anthropicServerTools, inferenceparser.Result{
			Style: "messages", Transport: "sse", ID: "msg_s", Model: "claude-x", Content: "Cold.", FinishReason: "end_turn",
			ServerToolCalls: []inferenceparser.ServerToolCall{
				{Type: "server_tool_use", ID: "srvtoolu_1", Name: "web_search", Arguments: `{"query": "weather Oslo"}`,
					ResultType: "web_search_tool_result", Result: json.RawMessage(`[{"type":"web_search_result","title":"Oslo","url":"https://weather.example/oslo"}]`)},
				{Type: "mcp_tool_use", ID: "mcptoolu_1", Name: "lookup", Server: "docs", Arguments: `{"q":"sse"}`,
					ResultType: "mcp_tool_result", Result: json.RawMessage(`[{"type":"text","text":"found"}]`)},
			},
			Usage: &inferenceparser.Usage{InputTokens: 20, OutputTokens: 9, TotalTokens: 29}, Done: true, Events: 16}},
		{"responses mcp_call", responsesMCP, inferenceparser.Result{
			Style: "responses", Transport: "sse", ID: "resp_m", Model: "gpt-4.1", Content: "Found it.", FinishReason: "completed",
			ServerToolCalls: []inferenceparser.ServerToolCall{{Type: "mcp_call", ID: "mcp_1", Name: "lookup", Server: "docs", Arguments: `{"q":"sse"}`,
				Status: "completed", Result: json.RawMessage(`"found"`)}},
			Usage: &inferenceparser.Usage{InputTokens: 7, OutputTokens: 12, TotalTokens: 19, ReasoningTokens: 4}, Done: true, Events: 6}},
		{"gemini thoughts tokens", geminiThoughtTokens, inferenceparser.Result{
			Style: "gemini", Transport: "sse", Content: "Yes.", Reasoning: "plan", FinishReason: "STOP",
			Usage: &inferenceparser.Usage{InputTokens: 4, OutputTokens: 2, TotalTokens: 30, ReasoningTokens: 24}, Done: true, Events: 2}},
		{"chat error mid-stream", chatErrorMidStream, inferenceparser.Result{
			Style: "chat-completions", Transport: "sse", ID: "gen-e", Model: "m", Content: "par", FinishReason: "error",
			Error: "Upstream provider disconnected", Done: true, Events: 3}},
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

// The same fields from non-streamed bodies: a chat message with reasoning
// and a legacy function_call, an Anthropic message with server tool blocks.
func TestReasoningAndServerToolsInBodies(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       inferenceparser.Result
	}{
		{"chat body", `{"id":"c3","object":"chat.completion","model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"hmm","function_call":{"name":"f","arguments":"{}"}},"finish_reason":"function_call"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"completion_tokens_details":{"reasoning_tokens":1}}}`,
			inferenceparser.Result{Style: "chat-completions", Transport: "json", ID: "c3", Model: "deepseek-reasoner", Reasoning: "hmm",
				ToolCalls: []inferenceparser.ToolCall{{Name: "f", Arguments: "{}"}}, FinishReason: "function_call",
				Usage: &inferenceparser.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3, ReasoningTokens: 1}, Done: true}},
		{"anthropic body", `{"id":"msg_b","type":"message","role":"assistant","model":"claude-x","content":[{"type":"server_tool_use","id":"s1","name":"code_execution","input":{"code":"1+1"}},{"type":"code_execution_tool_result","tool_use_id":"s1","content":{"type":"code_execution_result","stdout":"2","return_code":0}},{"type":"text","text":"2"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":4}}`,
			inferenceparser.Result{Style: "messages", Transport: "json", ID: "msg_b", Model: "claude-x", Content: "2", FinishReason: "end_turn",
				ServerToolCalls: []inferenceparser.ServerToolCall{{Type: "server_tool_use", ID: "s1", Name: "code_execution", Arguments: `{"code":"1+1"}`,
					ResultType: "code_execution_tool_result", Result: json.RawMessage(`{"type":"code_execution_result","stdout":"2","return_code":0}`)}},
				Usage: &inferenceparser.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7}, Done: true}},
	} {
		got, ok := run(t, "application/json", [][]byte{[]byte(tt.body)})
		if !ok {
			t.Fatalf("%s: no result", tt.name)
		}
		got.Request = nil
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

// An error event that is no provider's (neither an error object nor a
// message) is not evidence of inference traffic: with no inference request
// either, nothing is claimed.
func TestUnknownErrorEventNotClaimed(t *testing.T) {
	ctx := context.Background()
	p := plugintest.New(t, inferenceparser.Factory(), "")
	r := plugintest.NewRun("GET", "/events", nil)
	r.Request(ctx, p)
	r.Respond(200, "text/event-stream")
	r.Frames(ctx, [][]byte{[]byte("event: error\ndata: {\"reason\":\"x\"}\n\n")}, p)
	if got, ok := inferenceparser.FromExchange(r.Ex); ok {
		t.Errorf("claimed: %+v", got)
	}
}
