package examplerun_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/testbin"
)

// The inference fixtures of real traffic shapes (reasoning from
// OpenAI-compatible servers, Anthropic server tools, a Responses stream
// ending in an error event, an upstream error mid-stream with Mistral
// thinking, a legacy function call) give inference-parser what they hold.
// The golden traces pin the chain's hooks; this pins the extension.
func TestInferenceFixturesExtract(t *testing.T) {
	root, err := testbin.Root(context.Background())
	if err != nil {
		t.Skipf("no repository root: %v", err)
	}
	for _, tc := range []struct {
		file, reasoning, err, tool string
		servers, reasoningTokens   int
	}{
		{file: "reasoning-stream", reasoning: "91 is 7 times 13.", reasoningTokens: 22},
		{file: "server-tools", servers: 2},
		{file: "responses-reasoning-error", reasoning: "**Checking** the forecast", err: "server_error: The server had an error while processing your request."},
		{file: "chat-error-stream", reasoning: "Recall the capital", err: "Upstream provider disconnected"},
		{file: "function-call-stream", tool: "get_weather"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := fixture.ReadFile(filepath.Join(root, "fixtures", "inference", tc.file+".fixture"))
			if err != nil {
				t.Fatal(err)
			}
			var chunks [][]byte
			for _, c := range f.Response.Chunks {
				chunks = append(chunks, c.Data)
			}
			inf, ok, a2aOK, mcpOK := runParsers(f.Request, f.Response.Status, f.Response.Header.Get("Content-Type"), chunks)
			if !ok || a2aOK || mcpOK {
				t.Fatalf("claims: inference %v, a2a %v, mcp %v", ok, a2aOK, mcpOK)
			}
			if inf.Reasoning != tc.reasoning || inf.Error != tc.err || len(inf.ServerToolCalls) != tc.servers || inf.Malformed != 0 || inf.Logprobs {
				t.Errorf("got reasoning %q, error %q, %d server tool calls, malformed %d, logprobs %v", inf.Reasoning, inf.Error, len(inf.ServerToolCalls), inf.Malformed, inf.Logprobs)
			}
			if tc.reasoningTokens != 0 && (inf.Usage == nil || inf.Usage.ReasoningTokens != tc.reasoningTokens) {
				t.Errorf("usage %+v, want %d reasoning tokens", inf.Usage, tc.reasoningTokens)
			}
			if tc.tool != "" && (len(inf.ToolCalls) != 1 || inf.ToolCalls[0].Name != tc.tool || inf.ToolCalls[0].Arguments != `{"city":"Rome"}`) {
				t.Errorf("tool calls %+v", inf.ToolCalls)
			}
		})
	}
}
