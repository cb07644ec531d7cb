// Package plugins_test runs the example plugins together through the real
// pipeline runtime (internal/pipeline): chains as an operator would write
// them, with the runtime's frame cutting, P24 poisoning, buffering and
// finish order, rather than the hand-driven exchanges of each package's own
// tests.
package examplerun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/auditlog"
	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/examples/plugins/piiredactor"
	"github.com/abkit/abkit/examples/plugins/ratelimiter"
	"github.com/abkit/abkit/examples/plugins/toolallowlist"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/sdk/gateway"
)

// syncBuffer is an io.Writer safe for the concurrent OnFinish calls of
// different exchanges.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) records(t *testing.T) []auditlog.Record {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []auditlog.Record
	dec := json.NewDecoder(bytes.NewReader(s.b.Bytes()))
	for {
		var r auditlog.Record
		if err := dec.Decode(&r); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

// factories registers every example; audit-log writes to out.
func factories(out io.Writer) []gateway.Factory {
	audit := auditlog.Factory()
	audit.New = func(raw json.RawMessage) (gateway.Plugin, error) {
		return auditlog.New(auditlog.Config{}, out)
	}
	return []gateway.Factory{
		mcpparser.Factory(), a2aparser.Factory(), inferenceparser.Factory(),
		toolallowlist.Factory(), guardrail.Factory(), piiredactor.Factory(),
		ratelimiter.Factory(), audit,
	}
}

func build(t *testing.T, out io.Writer, entries ...pipeline.Entry) *pipeline.Chain {
	t.Helper()
	c, err := pipeline.Build(pipeline.Spec{Direction: gateway.Inbound, Entries: entries}, factories(out), pipeline.Options{PoisonFrames: true})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return c
}

func entry(name, config string) pipeline.Entry {
	e := pipeline.Entry{Plugin: name}
	if config != "" {
		e.Config = json.RawMessage(config)
	}
	return e
}

// chunks is an upstream stream that hands out fixed chunks.
type chunks struct{ c [][]byte }

func (s *chunks) Next(context.Context) ([]byte, error) {
	if len(s.c) == 0 {
		return nil, io.EOF
	}
	b := s.c[0]
	s.c = s.c[1:]
	return b, nil
}

func sseHeader() http.Header { return http.Header{"Content-Type": {"text/event-stream"}} }

// An MCP gateway: audit, rate limit, parse, allowlist, guardrail. A denied
// tool call is audited with the denying plugin and its tool (P15, P26,
// P29); an allowed one streams through and the parser's result is there at
// the end (P19, P21); the rate limiter's slots all come back (P26).
func TestMCPGatewayChain_P15_P19_P26_P29(t *testing.T) {
	var out syncBuffer
	c := build(t, &out,
		entry(auditlog.Name, ""),
		entry(ratelimiter.Name, `{"limit":4}`),
		entry(mcpparser.Name, ""),
		entry(toolallowlist.Name, `{"allow":["get_weather"]}`),
		entry(guardrail.Name, `{"phrases":["drop table"]}`),
	)
	if err := c.Ready(context.Background()); err != nil {
		t.Fatalf("ready after start: %v", err) // P14: audit-log is ready once initialised
	}
	ctx := context.Background()
	call := func(tool string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"city":"Paris"}}}`)
	}

	denied := c.Run(ctx, pipeline.Request{Request: gateway.Request{Method: "POST", URL: "/mcp"}, Body: call("delete_everything")}, pipeline.Upstream{}, pipeline.ExchangeOptions{})
	if denied.Outcome.Kind != gateway.OutcomeDeny || denied.Status != 403 || denied.Outcome.DeniedBy != toolallowlist.Name {
		t.Fatalf("denied exchange: %+v", denied.Outcome)
	}

	resp := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Sunny\"}]}}\n\n"
	e := c.NewExchange(pipeline.Request{Request: gateway.Request{Method: "POST", URL: "/mcp"}, Body: call("get_weather")}, pipeline.ExchangeOptions{})
	if !e.Request(ctx) {
		t.Fatal("allowed call denied")
	}
	// Chunks cut mid-event: the runtime reassembles frames (P19).
	e.Respond(ctx, pipeline.Upstream{Status: 200, Header: sseHeader(), Stream: &chunks{c: [][]byte{[]byte(resp[:30]), []byte(resp[30:101]), []byte(resp[101:])}}})
	allowed := e.Finish()
	if allowed.Outcome.Kind != gateway.OutcomeAllow || !allowed.Streamed || allowed.Frames != 2 {
		t.Fatalf("allowed exchange: %+v streamed=%v frames=%d warnings=%v", allowed.Outcome, allowed.Streamed, allowed.Frames, allowed.Warnings)
	}
	m, ok := mcpparser.FromExchange(e.Gateway())
	if !ok || len(m.Responses) != 1 || m.Responses[0].Text != "Sunny" || len(m.ServerCalls) != 1 {
		t.Fatalf("mcp extension: %+v", m)
	}

	recs := out.records(t)
	if len(recs) != 2 {
		t.Fatalf("%d audit lines, want 2", len(recs))
	}
	if r := recs[0]; r.Outcome != "deny" || r.DeniedBy != toolallowlist.Name || len(r.Tools) != 1 || r.Tools[0] != "delete_everything" {
		t.Fatalf("audit of the denied call: %+v", r)
	}
	if r := recs[1]; r.Outcome != "allow" || r.Status != 200 || r.Tools[0] != "get_weather" {
		t.Fatalf("audit of the allowed call: %+v", r)
	}
	// Every slot was released: four more concurrent requests fit.
	var es []*pipeline.Exchange
	for range 4 {
		e := c.NewExchange(pipeline.Request{Request: gateway.Request{Method: "POST", URL: "/mcp"}, Body: call("get_weather")}, pipeline.ExchangeOptions{})
		if !e.Request(ctx) {
			t.Fatal("rate limiter kept a slot of a finished exchange")
		}
		es = append(es, e)
	}
	over := c.Run(ctx, pipeline.Request{Request: gateway.Request{Method: "POST", URL: "/mcp"}, Body: call("get_weather")}, pipeline.Upstream{}, pipeline.ExchangeOptions{})
	if over.Status != 429 || over.Outcome.DeniedBy != ratelimiter.Name {
		t.Fatalf("fifth concurrent request: %+v", over.Outcome)
	}
	for _, e := range es {
		e.Respond(ctx, pipeline.Upstream{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)})
		e.Finish()
	}
}

const chatStream = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Run: DROP \"}}]}\n\n" +
	"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"TABLE users; mail bob@example.com\"}}]}\n\n" +
	"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: [DONE]\n\n"

// An inference gateway without a body writer streams; the guardrail stops
// the stream at the frame that completes the phrase, so the client gets the
// first frame only (P25).
func TestInferenceChainMidStreamReject_P25(t *testing.T) {
	c := build(t, io.Discard,
		entry(inferenceparser.Name, ""),
		entry(guardrail.Name, `{"phrases":["drop table"]}`),
	)
	var client pipeline.BufferClient
	res := c.Run(context.Background(),
		pipeline.Request{Request: gateway.Request{Method: "POST", URL: "/v1/chat/completions"}, Body: []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)},
		pipeline.Upstream{Status: 200, Header: sseHeader(), Stream: &chunks{c: [][]byte{[]byte(chatStream)}}},
		pipeline.ExchangeOptions{Client: &client})
	if res.Outcome.DeniedBy != guardrail.Name || !res.Streamed {
		t.Fatalf("outcome %+v streamed=%v", res.Outcome, res.Streamed)
	}
	got := client.Body.String()
	if strings.Contains(got, "TABLE") || !strings.Contains(got, "Run: DROP ") {
		t.Fatalf("client got %q: want the stream cut before the second frame", got)
	}
}

// With pii-redactor in the chain the stream is buffered (P18): the parser
// and guardrail still see every event, and the client gets the redacted
// body with its SSE framing intact (P17). The response runs in reverse
// declaration order (P16), so the parser, declared before the writer, sees
// the body after redaction.
func TestInferenceChainBufferedRedaction_P17_P18(t *testing.T) {
	c := build(t, io.Discard,
		entry(inferenceparser.Name, ""),
		entry(guardrail.Name, `{"phrases":["rm -rf"]}`),
		entry(piiredactor.Name, ""),
	)
	ctx := context.Background()
	var client pipeline.BufferClient
	e := c.NewExchange(pipeline.Request{Request: gateway.Request{Method: "POST", URL: "/v1/chat/completions"}, Body: []byte(`{"model":"m","stream":true,"messages":[]}`)}, pipeline.ExchangeOptions{Client: &client})
	if !e.Request(ctx) {
		t.Fatal("request denied")
	}
	e.Respond(ctx, pipeline.Upstream{Status: 200, Header: sseHeader(), Stream: &chunks{c: [][]byte{[]byte(chatStream[:50]), []byte(chatStream[50:])}}})
	res := e.Finish()
	if res.Outcome.Kind != gateway.OutcomeAllow || res.Streamed {
		t.Fatalf("outcome %+v streamed=%v warnings=%v", res.Outcome, res.Streamed, res.Warnings)
	}
	want := strings.Replace(chatStream, "bob@example.com", "[REDACTED:email]", 1)
	if got := client.Body.String(); got != want {
		t.Fatalf("client body\n got %q\nwant %q", got, want)
	}
	inf, ok := inferenceparser.FromExchange(e.Gateway())
	if !ok || inf.Content != "Run: DROP TABLE users; mail [REDACTED:email]" || inf.FinishReason != "stop" || !inf.Done {
		t.Fatalf("inference extension %+v", inf)
	}
}

// P9: a reader after the response writer is a build error, so a guardrail
// can never check text the redactor already rewrote; P7: tool-allowlist
// without its parser fails too; both are reported together (P6).
func TestChainRulesRejectBadOrder_P6_P7_P9(t *testing.T) {
	_, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{
		entry(piiredactor.Name, ""),
		entry(inferenceparser.Name, ""),
		entry(guardrail.Name, `{"phrases":["x"]}`),
		entry(toolallowlist.Name, `{"allow":[]}`),
	}}, factories(io.Discard), pipeline.Options{})
	if err == nil {
		t.Fatal("bad chain built")
	}
	for _, want := range []string{"P9", "P7", mcpparser.Name} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("build error does not mention %s:\n%v", want, err)
		}
	}
}
