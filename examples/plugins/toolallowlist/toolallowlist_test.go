package toolallowlist_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/examples/plugins/toolallowlist"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
)

func call(tool string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`)
}

// P15: the allowlist rejects a tool outside the list with 403 in OnRequest,
// using the request mcp-parser parsed; other tools and methods pass.
func TestRejectsAndPermits_P15(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		body         []byte
		wantStatus   int // 0: continue
	}{
		{"allowed tool", `{"allow":["get_weather","search"]}`, call("search"), 0},
		{"unlisted tool", `{"allow":["get_weather","search"]}`, call("rm_rf"), 403},
		{"empty list allows none", `{"allow":[]}`, call("search"), 403},
		{"not a tool call", `{"allow":[]}`, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), 0},
		{"batch with one bad call", `{"allow":["a"]}`, []byte(`[` + string(call("a")) + `,` + string(call("b")) + `]`), 403},
		{"not MCP at all", `{"allow":[]}`, []byte(`{"model":"x"}`), 0},
		{"no body", `{"allow":[]}`, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parser := plugintest.New(t, mcpparser.Factory(), "")
			allow := plugintest.New(t, toolallowlist.Factory(), tc.config)
			r := plugintest.NewRun("POST", "/mcp", tc.body)
			a := r.Request(context.Background(), parser, allow)
			if tc.wantStatus == 0 {
				if !a.IsContinue() {
					t.Fatalf("rejected: %+v", a)
				}
				return
			}
			if a.IsContinue() || a.Status != tc.wantStatus || !strings.Contains(a.Reason, "not allowed") {
				t.Fatalf("got %+v, want reject %d", a, tc.wantStatus)
			}
		})
	}
}

// The parsed request may arrive as a JSON map from another process.
func TestReadsExtensionFromAnotherProcess(t *testing.T) {
	allow := plugintest.New(t, toolallowlist.Factory(), `{"allow":["ok"]}`)
	r := plugintest.NewRun("POST", "/mcp", nil)
	r.Ctl.SetExtensions(map[string]any{"mcp": map[string]any{
		"requests": []any{map[string]any{"id": "1", "method": "tools/call", "name": "bad"}},
	}})
	if a := r.Request(context.Background(), allow); a.Status != 403 || !strings.Contains(a.Reason, `"bad"`) {
		t.Fatalf("got %+v", a)
	}
}

// P6: config is decoded strictly; errors name the field.
func TestConfigStrict_P6(t *testing.T) {
	f := toolallowlist.Factory()
	for config, want := range map[string]string{
		``:                                `missing required field "allow"`,
		`{}`:                              `missing required field "allow"`,
		`{"allow":["a"],"deny":["b"]}`:    `unknown field "deny"`,
		`{"allow":"a"}`:                   `field "allow": want array`,
		`{"allow":["a",""]}`:              `allow[1] is empty`,
		`{"allow":["a"]} {"allow":["b"]}`: `unexpected data`,
	} {
		var raw []byte
		if config != "" {
			raw = []byte(config)
		}
		_, err := f.New(raw)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), toolallowlist.Name) {
			t.Errorf("config %s: err = %v, want it to name the plugin and say %q", config, err, want)
		}
	}
	if err := config.CheckSchema(f.Config, toolallowlist.Config{}); err != nil {
		t.Fatal(err)
	}
}

// P5, P7: one-line description; requires mcp-parser.
func TestCapabilities_P5_P7(t *testing.T) {
	p := plugintest.New(t, toolallowlist.Factory(), `{"allow":[]}`)
	c := p.Capabilities()
	if err := gateway.CheckDescription(c.Description); err != nil {
		t.Fatal(err)
	}
	if len(c.Requires) != 1 || c.Requires[0] != mcpparser.Name {
		t.Fatalf("requires = %v", c.Requires)
	}
}
