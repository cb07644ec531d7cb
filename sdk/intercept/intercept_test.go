package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// D1
func TestPointsD1(t *testing.T) {
	ps := Points()
	if len(ps) != 17 {
		t.Fatalf("%d points", len(ps))
	}
	events := 0
	for _, p := range ps {
		if !p.Valid() || PayloadFor(p) == nil {
			t.Errorf("%s: not valid or no payload", p)
		}
		if IsEventOnly(p) {
			events++
		}
	}
	if events != 7 || IsEventOnly(ToolBefore) || !IsEventOnly(FrontendEvent) {
		t.Errorf("event-only count %d", events)
	}
	if Point("tool.nope").Valid() {
		t.Error("unknown point valid")
	}
}

// D3
func TestBudgetD3(t *testing.T) {
	for p, want := range map[Point]time.Duration{InputReceive: 5 * time.Second, ToolBefore: 5 * time.Second,
		ToolAfter: 5 * time.Second, PermissionDecision: 5 * time.Second, ContextPrepare: 30 * time.Second,
		ProviderResponse: 30 * time.Second, CompactionComplete: 30 * time.Second} {
		if got := Budget(p); got != want {
			t.Errorf("Budget(%s) = %v, want %v", p, got, want)
		}
	}
}

// D2: validity rules per payload.
func TestValidateD2(t *testing.T) {
	tests := []struct {
		point Point
		data  string
		ok    bool
	}{
		{InputReceive, `{"text":"x"}`, true},
		{InputReceive, `{"text":""}`, false},
		{AgentBeforeStart, `{"model":"m","toolCount":1,"sessionId":"s"}`, true},
		{AgentBeforeStart, `{"model":"m"}`, false},
		{ContextPrepare, `{"messages":[]}`, true},
		{ContextPrepare, `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c","name":"ls","arguments":"{}"}]},{"role":"tool","tool_call_id":"c","content":"x"}]}`, true},
		{ContextPrepare, `{"messages":[{"role":"user","text":"hi"}]}`, false},
		{ContextPrepare, `{"messages":{}}`, false},
		{ContextPrepare, `{"messages":null}`, false},
		{ContextPrepare, `{}`, false},
		{ContextPrepare, `{"messages":[],"guidance":"g"}`, false},
		{CompactionPrepare, `{"messages":[{"role":"user"}],"guidance":"g"}`, true},
		{CompactionPrepare, `{"messages":[1]}`, false},
		{ProviderRequest, `{"request":{"messages":[],"tools":[],"maxTokens":0}}`, true},
		{ProviderRequest, `{"request":{"messages":[],"tools":[{"name":"ls","parameters":{"type":"object"}}],"temperature":0.2,"maxTokens":10,"responseFormat":{"type":"json_object"}}}`, true},
		{ProviderRequest, `{"request":{}}`, false},
		{ProviderRequest, `{"request":{"messages":[],"tools":[],"maxTokens":-1}}`, false},
		{ProviderRequest, `{"request":{"messages":[],"tools":[{"name":"ls","parameters":[]}]}}`, false},
		{ProviderRequest, `{"request":{"messages":[],"tools":[],"responseFormat":{"type":" "}}}`, false},
		{ProviderRequest, `{"request":"x"}`, false},
		{ProviderResponse, `{"text":"t","calls":[{"id":"c","name":"ls","arguments":"{}"}],"usage":{"promptTokens":1,"finishReason":"stop"}}`, true},
		{ProviderResponse, `{"calls":[{"id":"c","name":""}]}`, false},
		{ProviderResponse, `{"calls":[{"name":"ls","arguments":"{}"}]}`, false},
		{ProviderResponse, `{"calls":[{"id":"c","name":"ls","arguments":{}}]}`, false},
		{ProviderResponse, `{"usage":{"in":1}}`, false},
		{ToolBefore, `{"name":"ls"}`, true},
		{ToolBefore, `{"name":"ls","arguments":"{\"path\":\"/\"}"}`, true},
		{ToolBefore, `{"name":"ls","arguments":null}`, true},
		{ToolBefore, `{"name":"ls","arguments":"x"}`, false},
		{ToolBefore, `{"name":"ls","arguments":"[1]"}`, false},
		{ToolBefore, `{"name":"ls","arguments":{}}`, false},
		{ToolBefore, `{"name":"ls","callId":"c"}`, false},
		{ToolBefore, `{"arguments":"{}"}`, false},
		{ToolAfter, `{"name":"ls","result":"out","isError":true}`, true},
		{ToolAfter, `{"name":"ls","result":1}`, false},
		{PermissionDecision, `{"name":"rm","hostDecision":"allow"}`, true},
		{PermissionDecision, `{"name":"rm","arguments":"{}","readOnly":true,"hostDecision":"deny"}`, true},
		{PermissionDecision, `{"name":"rm","hostDecision":"continue"}`, false},
		{CompactionComplete, `{"summary":"s"}`, true},
		{CompactionComplete, `{}`, false},
		{SessionStart, `{"phase":"start"}`, true},
		{SessionRotate, `{"sessionPath":"/p","phase":"rotate"}`, true},
		{SessionEnd, `{"phase":"start"}`, false},
		{SystemPromptBuild, `{"prompt":"","workspaceRoot":"/w"}`, true},
		{SystemPromptBuild, `{"prompt":"p"}`, false},
		{FrontendEvent, `{"kind":"status","text":"t","detail":"d"}`, true},
		{FrontendEvent, `{"kind":"status","detail":{"a":1}}`, false},
		{FrontendEvent, `{"text":"t"}`, false},
	}
	for _, tt := range tests {
		_, err := DecodeStrict(tt.point, []byte(tt.data))
		if (err == nil) != tt.ok {
			t.Errorf("%s %s: err = %v, want ok=%v", tt.point, tt.data, err, tt.ok)
		}
	}
	if err := (&InputPayload{Text: "x"}).Validate(ToolBefore); !errors.Is(err, ErrWrongPayload) {
		t.Errorf("wrong point: %v", err)
	}
	if err := (&SessionPayload{Phase: "start"}).Validate(SessionStart); err != nil {
		t.Error(err)
	}
	if err := (&SessionPayload{Phase: "x"}).Validate("session.x"); !errors.Is(err, ErrWrongPayload) {
		t.Errorf("session.x: %v", err)
	}
}

// D8: strictness of the decoder.
func TestDecodeStrictD8(t *testing.T) {
	for _, bad := range []string{
		`{"text":"x","extra":1}`, `{"TEXT":"x"}`, `{"text":"x","text":"y"}`, `{"text":1}`,
		`{"text":"x"}{}`, `{"text":"x"} x`, `["x"]`, `"x"`, ``,
	} {
		if _, err := DecodeStrict(InputReceive, []byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if _, err := DecodeStrict(ProviderResponse, []byte(`{"calls":[{"id":"c","NAME":"ls"}]}`)); err == nil {
		t.Error("accepted a nested key in the wrong case")
	}
	p, err := DecodeStrict(ToolBefore, []byte(" {\"name\":\"ls\"}\n"))
	if err != nil || p.(*ToolBeforePayload).Name != "ls" {
		t.Errorf("p=%v err=%v", p, err)
	}
}

// D17: slot names.
func TestParseSlotD17(t *testing.T) {
	good := map[string]Slot{
		"system_prompt":                    {Kind: SlotSystemPrompt},
		"context":                          {Kind: SlotContext},
		"provider_request":                 {Kind: SlotProviderRequest},
		"provider_response":                {Kind: SlotProviderResponse},
		"compaction":                       {Kind: SlotCompaction},
		"session_policy":                   {Kind: SlotSessionPolicy},
		"permission":                       {Kind: SlotPermission},
		"frontend_events":                  {Kind: SlotFrontendEvents},
		"tool:ls":                          {Kind: SlotTool, Tool: "ls"},
		"tool:mcp__fs__read":               {Kind: SlotTool, Tool: "mcp__fs__read"},
		"provider:openai/gpt-4o":           {Kind: SlotProvider, Provider: "openai", Model: "gpt-4o"},
		"provider:or/meta-llama/llama-3":   {Kind: SlotProvider, Provider: "or", Model: "meta-llama/llama-3"},
		"provider:plugin/p1/anthropic/c-4": {Kind: SlotProvider, Plugin: "p1", Provider: "anthropic", Model: "c-4"},
	}
	for s, want := range good {
		got, err := ParseSlot(s)
		if err != nil || got != want || got.String() != s {
			t.Errorf("ParseSlot(%q) = %+v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "tool", "tool:", "tool:a b", "tools", "Context", "provider:", "provider:x",
		"provider:/m", "provider:x/", "provider:plugin/a/b", "provider:plugin//b/c", "provider:a/b c", "tool:\tx", "provider"} {
		_, err := ParseSlot(s)
		if err == nil || !strings.Contains(err.Error(), "provider:plugin/<id>/<name>/<model>") {
			t.Errorf("ParseSlot(%q) err = %v, want rejection listing valid forms", s, err)
		}
	}
}

// D19, D20: slot → point mapping.
func TestSlotAppliesD19D20(t *testing.T) {
	tool, _ := ParseSlot("tool:ls")
	if !tool.Applies(ToolBefore, "ls", "") || tool.Applies(ToolBefore, "cat", "") || tool.Applies(InputReceive, "ls", "") {
		t.Error("tool slot mapping")
	}
	pol, _ := ParseSlot("session_policy")
	if !pol.Applies(SessionRotate, "", "") || pol.Applies(ToolBefore, "", "") {
		t.Error("session_policy mapping")
	}
	pv, _ := ParseSlot("provider:plugin/p/n/m")
	if !pv.Applies(ProviderResponse, "", "plugin/p/n/m") || pv.Applies(ProviderResponse, "", "n/m") || pv.Applies(ProviderRequest, "", "") {
		t.Error("provider slot mapping")
	}
}

func TestHandlers(t *testing.T) {
	h := Handlers{ToolBefore: func(_ context.Context, p *ToolBeforePayload) (Answer, error) {
		if p.Name == "rm" {
			return Block("no rm"), nil
		}
		return Replace(&ToolBeforePayload{Name: p.Name + "2"})
	}}
	a, err := h.Call(context.Background(), ToolBefore, json.RawMessage(`{"name":"rm"}`))
	if err != nil || a.Decision != DecisionBlock || a.Reason != "no rm" {
		t.Errorf("%+v %v", a, err)
	}
	a, err = h.Call(context.Background(), ToolBefore, json.RawMessage(`{"name":"ls"}`))
	if err != nil || a.Decision != DecisionReplace || string(a.Replacement) != `{"name":"ls2"}` {
		t.Errorf("%+v %v", a, err)
	}
	if a, _ := h.Call(context.Background(), InputReceive, json.RawMessage(`{"text":"x"}`)); a.Decision != DecisionContinue {
		t.Error("nil handler should continue")
	}
	if err := h.Notify(SessionStart, nil); err != nil {
		t.Error(err)
	}
	if !Decision("allow").Valid() || Decision("maybe").Valid() {
		t.Error("Decision.Valid")
	}
}
