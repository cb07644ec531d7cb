package examplerun_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/promptowner"
	"github.com/abkit/abkit/internal/dispatch"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/intercept"
)

// replacer rewrites the request in the chain walk, to show that the owner
// rules last (D19).
func replacer() intercept.Extension {
	return intercept.Handlers{ProviderRequest: func(_ context.Context, p *intercept.ProviderRequestPayload) (intercept.Answer, error) {
		return intercept.Replace(intercept.ProviderRequestPayload{Request: json.RawMessage(`{"model":"m","system":"walker's prompt"}`)})
	}}
}

func dispatchReq(t *testing.T, c promptowner.Config, request string, extra ...dispatch.Contribution) dispatch.Result {
	t.Helper()
	ext, err := promptowner.New(c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.New(append(extra, dispatch.Contribution{Manifest: promptowner.Manifest(), Extension: ext}), dispatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := d.Dispatch(context.Background(), dispatch.Request{Point: intercept.ProviderRequest, Payload: json.RawMessage(`{"request":` + request + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func request(t *testing.T, res dispatch.Result) map[string]any {
	t.Helper()
	var p struct {
		Request map[string]any `json:"request"`
	}
	if err := json.Unmarshal(res.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p.Request
}

// D19: in its strategy call the owner sets the prompt on the request as
// the walk left it, in both request styles and every mode.
func TestSetsPrompt_D19(t *testing.T) {
	for _, tc := range []struct {
		name, mode, req string
		want            map[string]any
	}{
		{"messages style replace", "", `{"model":"m","system":"old"}`, map[string]any{"model": "m", "system": "P"}},
		{"messages style append", "append", `{"model":"m","system":"old"}`, map[string]any{"model": "m", "system": "old\n\nP"}},
		{"messages style blocks prepend", "prepend", `{"system":[{"type":"text","text":"old"}]}`,
			map[string]any{"system": []any{map[string]any{"type": "text", "text": "P"}, map[string]any{"type": "text", "text": "old"}}}},
		{"chat style replaces the system message", "", `{"messages":[{"role":"system","content":"old"},{"role":"user","content":"hi"}]}`,
			map[string]any{"messages": []any{map[string]any{"role": "system", "content": "P"}, map[string]any{"role": "user", "content": "hi"}}}},
		{"chat style without one gets one", "prepend", `{"messages":[{"role":"user","content":"hi"}]}`,
			map[string]any{"messages": []any{map[string]any{"role": "system", "content": "P"}, map[string]any{"role": "user", "content": "hi"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := dispatchReq(t, promptowner.Config{Prompt: "P", Mode: tc.mode}, tc.req)
			if got := request(t, res); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("request %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(res.Replaced, []string{promptowner.Name}) {
				t.Fatalf("replaced by %v", res.Replaced)
			}
		})
	}
	// The owner rules after a chain member's replace (D19).
	walker := dispatch.Contribution{Manifest: intercept.Manifest{PluginID: "walker", Points: []intercept.Point{intercept.ProviderRequest}}, Extension: replacer()}
	res := dispatchReq(t, promptowner.Config{Prompt: "P", Mode: "append"}, `{"model":"m"}`, walker)
	if got := request(t, res); got["system"] != "walker's prompt\n\nP" || !reflect.DeepEqual(res.Replaced, []string{"walker", promptowner.Name}) {
		t.Fatalf("request %v replaced by %v", got, res.Replaced)
	}
}

// D11: a request that already carries the prompt is left byte for byte.
func TestAlreadySet_D11(t *testing.T) {
	res := dispatchReq(t, promptowner.Config{Prompt: "P"}, `{"system":"P", "model":"m"}`)
	if res.Changed {
		t.Fatalf("changed: %s", res.Payload)
	}
}

// D12 D17 D18: owning slots makes it required-class; a second owner of
// the same slot fails the build, naming both.
func TestSlots_D17_D18(t *testing.T) {
	ext, _ := promptowner.New(promptowner.DefaultConfig())
	other := intercept.Manifest{PluginID: "other-owner", Slots: []string{"system_prompt"}}
	_, err := dispatch.New([]dispatch.Contribution{
		{Manifest: promptowner.Manifest(), Extension: ext},
		{Manifest: other, Extension: ext},
	}, dispatch.Options{})
	if err == nil || !strings.Contains(err.Error(), "other-owner") || !strings.Contains(err.Error(), promptowner.Name) {
		t.Fatalf("two owners of system_prompt: err = %v, want both named", err)
	}
	for _, s := range promptowner.Manifest().Slots {
		if _, err := intercept.ParseSlot(s); err != nil {
			t.Fatal(err)
		}
	}
	p := promptowner.Plugin()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := gateway.CheckDescription(p.Description); err != nil {
		t.Fatal(err) // P5
	}
	if _, err := promptowner.New(promptowner.Config{Prompt: "x", Mode: "sideways"}); err == nil {
		t.Fatal("bad mode accepted")
	}
}
