package guardrail_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
)

const testConfig = `{"phrases":["Drop Table"],"patterns":["\\b\\d{3}-\\d{2}-\\d{4}\\b"]}`

// P15: a rule matching the parsed request rejects in OnRequest; the parsers
// supply the text, and an unparsed body is checked raw.
func TestRequestReject_P15(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parser gateway.Factory
		body   string
		reject bool
	}{
		{"inference message", inferenceparser.Factory(), `{"model":"m","messages":[{"role":"user","content":"please drop table users"}]}`, true},
		{"inference system prompt", inferenceparser.Factory(), `{"model":"m","system":"ssn 123-45-6789","messages":[]}`, true},
		{"inference clean", inferenceparser.Factory(), `{"model":"m","messages":[{"role":"user","content":"hello"}]}`, false},
		{"mcp arguments", mcpparser.Factory(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sql","arguments":{"q":"DROP TABLE x"}}}`, true},
		{"a2a message", a2aparser.Factory(), `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"parts":[{"kind":"text","text":"drop table now"}]}}}`, true},
		{"unparsed body is checked raw", mcpparser.Factory(), `plain text: drop table`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parser := plugintest.New(t, tc.parser, "")
			g := plugintest.New(t, guardrail.Factory(), testConfig)
			r := plugintest.NewRun("POST", "/", []byte(tc.body))
			a := r.Request(context.Background(), parser, g)
			if a.IsContinue() == tc.reject {
				t.Fatalf("got %+v, want reject=%v", a, tc.reject)
			}
			if tc.reject && (a.Status != 403 || !strings.Contains(a.Reason, "request")) {
				t.Fatalf("reject %+v", a)
			}
		})
	}
}

func chatChunk(content string) string {
	return `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + content + `"}}]}` + "\n\n"
}

// P25: the guardrail rejects in OnResponseFrame at the frame that completes
// a blocked phrase, also when the phrase is split across frames; earlier
// frames passed.
func TestMidStreamReject_P25(t *testing.T) {
	frames := [][]byte{
		[]byte(chatChunk("Sure, I will ")),
		[]byte(chatChunk("dro")),
		[]byte(chatChunk("p tab")),
		[]byte(chatChunk("le users now")),
		[]byte(chatChunk("and more")),
		[]byte("data: [DONE]\n\n"),
	}
	parser := plugintest.New(t, inferenceparser.Factory(), "")
	g := plugintest.New(t, guardrail.Factory(), testConfig)
	r := plugintest.NewRun("POST", "/v1/chat/completions", []byte(`{"model":"m","messages":[]}`))
	if a := r.Request(context.Background(), parser, g); !a.IsContinue() {
		t.Fatalf("request rejected: %+v", a)
	}
	r.Respond(200, "text/event-stream")
	a, at := r.Frames(context.Background(), frames, parser, g)
	if a.IsContinue() || at != 3 || a.Status != 403 || !strings.Contains(a.Reason, `phrases[0] ("Drop Table")`) || !strings.Contains(a.Reason, "response") {
		t.Fatalf("got %+v at frame %d, want a reject at frame 3", a, at)
	}
}

// A pattern in a non-streamed JSON body (P22) and in an MCP SSE result;
// a clean stream passes through last=true.
func TestResponseRejects(t *testing.T) {
	for _, tc := range []struct {
		name, ct, body string
		reject         bool
	}{
		{"json body", "application/json", `{"choices":[{"index":0,"message":{"content":"his ssn is 123-45-6789"}}]}`, true},
		{"mcp sse", "text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"DROP TABLE\"}]}}\n\n", true},
		{"messages stream clean", "text/event-stream", "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"drop the table\"}}\n\n", false},
		{"plain text", "text/plain", "drop table", true},
		{"ids are not text", "application/json", `{"id":"123-45-6789","choices":[]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := plugintest.New(t, guardrail.Factory(), testConfig)
			r := plugintest.NewRun("POST", "/", nil)
			r.Request(context.Background(), g)
			r.Respond(200, tc.ct)
			a, _ := r.Frames(context.Background(), plugintest.Split([]byte(tc.body), 9), g)
			if a.IsContinue() == tc.reject {
				t.Fatalf("got %+v, want reject=%v", a, tc.reject)
			}
		})
	}
}

// check and case_sensitive change what is checked.
func TestCheckAndCase(t *testing.T) {
	g := plugintest.New(t, guardrail.Factory(), `{"phrases":["Secret"],"case_sensitive":true,"check":"response","status":451}`)
	r := plugintest.NewRun("POST", "/", []byte(`Secret`))
	if a := r.Request(context.Background(), g); !a.IsContinue() {
		t.Fatalf("request side checked despite check=response: %+v", a)
	}
	r.Respond(200, "text/plain")
	if a, _ := r.Frames(context.Background(), [][]byte{[]byte("secret")}, g); !a.IsContinue() {
		t.Fatalf("case-sensitive rule matched lower case: %+v", a)
	}
	r2 := plugintest.NewRun("POST", "/", nil)
	r2.Respond(200, "text/plain")
	if a, _ := r2.Frames(context.Background(), [][]byte{[]byte("a Secret")}, g); a.Status != 451 {
		t.Fatalf("got %+v, want 451", a)
	}
}

// P6: strict config with errors naming the field.
func TestConfig_P6(t *testing.T) {
	for config, want := range map[string]string{
		`{}`:                                 "no rules",
		`{"phrases":["x"],"status":200}`:     `field "status"`,
		`{"patterns":["("]}`:                 `patterns[0]`,
		`{"phrases":["x"],"check":"side"}`:   `field "check"`,
		`{"phrases":["x"],"block":["y"]}`:    `unknown field "block"`,
		`{"phrases":["x"],"window":"large"}`: `field "window": want integer`,
	} {
		if _, err := guardrail.Factory().New([]byte(config)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %s: err = %v, want %q", config, err, want)
		}
	}
	if err := config.CheckSchema(guardrail.Schema(), guardrail.Config{}); err != nil {
		t.Fatal(err)
	}
}

// P5, P8: description; requires any of the three parsers.
func TestCapabilities_P5_P8(t *testing.T) {
	c := plugintest.New(t, guardrail.Factory(), testConfig).Capabilities()
	if err := gateway.CheckDescription(c.Description); err != nil {
		t.Fatal(err)
	}
	if len(c.RequiresAny) != 3 || !c.ReadsBody {
		t.Fatalf("capabilities %+v", c)
	}
}
