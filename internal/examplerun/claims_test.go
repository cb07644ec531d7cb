package examplerun_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/testbin"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
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

// Shapes that fooled a claim by structure alone: an OpenAI-compatible
// chunk with an id and an error object, and a plain JSON error body. They
// have an id and an error, but no JSON-RPC 2.0 envelope: inference, not MCP
// or A2A.
func TestErrorShapesAreNotJSONRPC(t *testing.T) {
	for _, tc := range []struct{ name, kind, body string }{
		{"chat chunk with error", "sse", "data: {\"id\":\"gen-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"error\"}],\"error\":{\"code\":502,\"message\":\"Upstream provider failed\"}}\n\ndata: [DONE]\n\n"},
		{"bare error event", "sse", "data: {\"id\":\"gen-2\",\"error\":{\"code\":429,\"message\":\"Rate limit exceeded\"}}\n\n"},
		{"429 body", "json", `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := fixture.ParseRequest("req", []byte("POST https://llm.example/v1/chat/completions\nContent-Type: application/json\n\n"+`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			ct := "application/json"
			if tc.kind == "sse" {
				ct = "text/event-stream"
			}
			inf, infOK, a2aOK, mcpOK := runParsers(req, http.StatusTooManyRequests, ct, plugintest.Split([]byte(tc.body), 7))
			if mcpOK || a2aOK {
				t.Errorf("claimed by mcp-parser %v, a2a-parser %v: no JSON-RPC envelope", mcpOK, a2aOK)
			}
			if !infOK || inf.Error == "" {
				t.Errorf("inference-parser: claimed %v, error %q; want the upstream error", infOK, inf.Error)
			}
		})
	}
}

// Every fixture under fixtures/ runs through all three parsers: none
// claims a fixture of another protocol's suite (the suite's own parser may
// leave one alone, such as an upstream's HTML error page).
func TestNoParserClaimsAnotherSuitesFixtures(t *testing.T) {
	root, err := testbin.Root(context.Background())
	if err != nil {
		t.Skipf("no repository root: %v", err)
	}
	owner := map[string]string{"inference": inferenceparser.Name, "bigstream": inferenceparser.Name, "mcp": mcpparser.Name, "a2a": a2aparser.Name}
	paths, err := filepath.Glob(filepath.Join(root, "fixtures", "*", "*.fixture"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures found under %s: %v", root, err)
	}
	for _, path := range paths {
		suite := filepath.Base(filepath.Dir(path))
		own, ok := owner[suite]
		if !ok {
			t.Errorf("suite %s: name its parser in this test", suite)
			continue
		}
		t.Run(suite+"/"+filepath.Base(path), func(t *testing.T) {
			f, err := fixture.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			chunks := [][]byte{f.Response.BodyBytes()}
			if f.Response.Streamed() {
				chunks = chunks[:0]
				for _, c := range f.Response.Chunks {
					chunks = append(chunks, c.Data)
				}
			}
			_, infOK, a2aOK, mcpOK := runParsers(f.Request, f.Response.Status, f.Response.Header.Get("Content-Type"), chunks)
			for name, claimed := range map[string]bool{inferenceparser.Name: infOK, a2aparser.Name: a2aOK, mcpparser.Name: mcpOK} {
				if claimed && name != own {
					t.Errorf("%s claimed a %s fixture (%s's traffic)", name, suite, own)
				}
			}
		})
	}
}

// runParsers runs the three parsers in one chain over a response given as
// chunks, and reports what each stored.
func runParsers(req fixture.Request, status int, contentType string, chunks [][]byte) (inf inferenceparser.Result, infOK, a2aOK, mcpOK bool) {
	ctx := context.Background()
	ip, _ := inferenceparser.Factory().New(nil)
	ap, _ := a2aparser.Factory().New(nil)
	mp, _ := mcpparser.Factory().New(nil)
	plugins := []gateway.Plugin{ip, ap, mp}
	r := plugintest.NewRun(req.Method, req.URL, req.Body)
	for k, v := range req.Header {
		r.Ex.Request.Header[k] = v
	}
	r.Request(ctx, plugins...)
	r.Respond(status, contentType)
	r.Frames(ctx, chunks, plugins...)
	inf, infOK = inferenceparser.FromExchange(r.Ex)
	_, a2aOK = a2aparser.FromExchange(r.Ex)
	_, mcpOK = mcpparser.FromExchange(r.Ex)
	return inf, infOK, a2aOK, mcpOK
}

// An MCP request answered by its server's OAuth layer with a bare JSON
// error (no JSON-RPC envelope): inference-parser saw a JSON-RPC request, so
// the exchange is not inference; mcp-parser keeps only the request it saw.
func TestOAuthErrorOnMCPExchange(t *testing.T) {
	req, err := fixture.ParseRequest("req", []byte("POST https://mcp.example/mcp\nContent-Type: application/json\n\n"+`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"error":"invalid_token","error_description":"The access token expired"}`, `{"error":{"code":401,"message":"unauthorized"}}`} {
		inf, infOK, a2aOK, _ := runParsers(req, http.StatusUnauthorized, "application/json", [][]byte{[]byte(body)})
		if infOK || a2aOK {
			t.Errorf("%s: claimed by inference-parser %v (%+v), a2a-parser %v", body, infOK, inf, a2aOK)
		}
	}
}
