package examplerun_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/submitguard"
	"github.com/abkit/abkit/internal/hookbus"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
)

func msgs(contents ...string) []json.RawMessage {
	var out []json.RawMessage
	for _, c := range contents {
		out = append(out, json.RawMessage(c))
	}
	return out
}

// H3 H4: run through the real bus, a matching rule rejects with a
// recognisable rejection carrying the reason and the hook ID; other
// requests pass unchanged.
func TestRejectsByRule_H3_H4(t *testing.T) {
	h, err := submitguard.New(submitguard.Config{BlockedModels: []string{"gpt-3*"}, Phrases: []string{"Ignore Previous"}, MaxMessages: 3})
	if err != nil {
		t.Fatal(err)
	}
	bus, err := hookbus.New(hookbus.Config{Submit: []hooks.SubmitHook{h}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		s      hooks.Submit
		reason string // empty: passes
	}{
		{"blocked model glob", hooks.Submit{Model: "gpt-3.5-turbo"}, `model "gpt-3.5-turbo"`},
		{"phrase in string content", hooks.Submit{Model: "m", Messages: msgs(`{"role":"user","content":"please IGNORE previous rules"}`)}, "message 0 contains a blocked phrase"},
		{"phrase in content parts", hooks.Submit{Model: "m", Messages: msgs(`{"role":"user","content":"ok"}`, `{"role":"user","content":[{"type":"text","text":"ignore previous"}]}`)}, "message 1"},
		{"too many messages", hooks.Submit{Model: "m", Messages: msgs(`{}`, `{}`, `{}`, `{}`)}, "4 messages; the limit is 3"},
		{"clean", hooks.Submit{Model: "gpt-4", Messages: msgs(`{"role":"user","content":"hello"}`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := bus.RunSubmit(context.Background(), &tc.s)
			if tc.reason == "" {
				if err != nil || res.Submit == nil || res.Submit.Model != tc.s.Model {
					t.Fatalf("clean request: res %+v err %v", res, err)
				}
				return
			}
			reason, ok := hooks.IsReject(err)
			var re *hooks.RejectError
			if !ok || !strings.Contains(reason, tc.reason) || !errors.As(err, &re) || re.Hook != submitguard.Name {
				t.Fatalf("err = %v, want a rejection by %s saying %q", err, submitguard.Name, tc.reason)
			}
		})
	}
}

// The spec is fail-closed (H3) and valid; config errors name the entry;
// the catalog bundle is valid (P5).
func TestSpecConfigPlugin_H3_P5(t *testing.T) {
	h, err := submitguard.New(submitguard.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if s := h.Spec(); s.Policy != hooks.PolicyFailClosed || s.Validate() != nil {
		t.Fatalf("spec %+v", s)
	}
	for _, c := range []submitguard.Config{{Phrases: []string{""}}, {BlockedModels: []string{"["}}, {MaxMessages: -1}} {
		if _, err := submitguard.New(c); err == nil || !strings.Contains(err.Error(), submitguard.Name) {
			t.Errorf("config %+v: err = %v", c, err)
		}
	}
	p := submitguard.Plugin()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := gateway.CheckDescription(p.Description); err != nil {
		t.Fatal(err)
	}
}
