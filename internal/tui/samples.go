package tui

import (
	_ "embed"
	"net/http"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pipeline"
)

//go:embed example_chain.yaml
var exampleChain []byte

// ExampleChainName is the name the built-in example chain is shown under.
const ExampleChainName = "example-chain.yaml (built-in)"

// ExampleChain returns the chain the TUI loads when no chain file is given.
func ExampleChain() *catalog.ChainFile {
	cf, err := catalog.ParseChain(ExampleChainName, exampleChain)
	if err != nil {
		panic("tui: built-in example chain does not parse: " + err.Error()) // a test covers it
	}
	return cf
}

// ExampleChainYAML returns the example chain's text, written to a file
// when the user edits it.
func ExampleChainYAML() []byte { return append([]byte(nil), exampleChain...) }

func sseHeader() http.Header { return http.Header{"Content-Type": {"text/event-stream"}} }

func chatRequest(content string) pipeline.Request {
	return pipeline.RequestTo("POST", "https://llm.example/v1/chat/completions", http.Header{"Content-Type": {"application/json"}},
		[]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"`+content+`"}]}`))
}

func delta(s string) string {
	return `data: {"choices":[{"index":0,"delta":{"content":"` + s + `"}}]}` + "\n\n"
}

// SampleExchanges are the exchanges the Trace tab offers when no fixtures
// directory is given: small, made up, and chosen to show a clean stream,
// a mid-stream reject and a body rewrite with the example chain.
func SampleExchanges() []Exchange {
	return []Exchange{
		{
			Name: "chat-stream-clean", Note: "streamed chat completion, 4 frames, allowed", Direction: "inbound",
			Request: chatRequest("How do I list files?"), Status: 200, Header: sseHeader(),
			Chunks: [][]byte{
				[]byte(delta("Use ")), []byte(delta("ls -la") + ": keep-alive\n\n"),
				[]byte(delta(" in a shell.")), []byte("data: [DONE]\n\n"),
			},
		},
		{
			Name: "chat-stream-reject", Note: "streamed chat completion, guardrail rejects frame 3", Direction: "inbound",
			Request: chatRequest("How do I free disk space?"), Status: 200, Header: sseHeader(),
			Chunks: [][]byte{
				[]byte(delta("You could ")), []byte(delta("clean caches, ")),
				[]byte("event: message\nid: 3\n" + delta("or run rm -rf /")[0:]), []byte(delta(" (never do that).")),
				[]byte("data: [DONE]\n\n"),
			},
		},
		{
			Name: "chat-pii-redact", Note: "buffered chat completion, pii-redactor rewrites the body", Direction: "outbound",
			Request: pipeline.RequestTo("POST", "https://llm.example/v1/chat/completions", http.Header{"Content-Type": {"application/json"}},
				[]byte(`{"model":"m","messages":[{"role":"user","content":"Who is on call?"}]}`)),
			Status: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"Call Ana at ana@example.com or +1 415 555 0100."}}]}`),
		},
	}
}
