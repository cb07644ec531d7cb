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
		p.Request.Messages = []intercept.Message{{Role: "system", Content: "walker's prompt"}}
		return intercept.Replace(p)
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

// messages is the request's messages as the host got them.
func messages(t *testing.T, res dispatch.Result) []intercept.Message {
	t.Helper()
	var p intercept.ProviderRequestPayload
	if err := json.Unmarshal(res.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p.Request.Messages
}

// D19: in its strategy call the owner sets the prompt on the request as
// the walk left it, in every mode; the rest of the request is kept.
func TestSetsPrompt_D19(t *testing.T) {
	sys := func(c string) intercept.Message { return intercept.Message{Role: "system", Content: c} }
	hi := intercept.Message{Role: "user", Content: "hi"}
	for _, tc := range []struct {
		name, mode, req string
		want            []intercept.Message
	}{
		{"replace", "", `{"messages":[{"role":"system","content":"old"},{"role":"user","content":"hi"}],"tools":[],"maxTokens":9}`, []intercept.Message{sys("P"), hi}},
		{"append", "append", `{"messages":[{"role":"system","content":"old"},{"role":"user","content":"hi"}],"tools":[],"maxTokens":9}`, []intercept.Message{sys("old\n\nP"), hi}},
		{"prepend to a developer message", "prepend", `{"messages":[{"role":"developer","content":"old"}],"tools":[],"maxTokens":9}`,
			[]intercept.Message{{Role: "developer", Content: "P\n\nold"}}},
		{"without one gets one", "prepend", `{"messages":[{"role":"user","content":"hi"}],"tools":[],"maxTokens":9}`, []intercept.Message{sys("P"), hi}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := dispatchReq(t, promptowner.Config{Prompt: "P", Mode: tc.mode}, tc.req)
			if got := messages(t, res); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("messages %v, want %v", got, tc.want)
			}
			if got := request(t, res); got["maxTokens"] != 9.0 {
				t.Fatalf("request %v: maxTokens lost", got)
			}
			if !reflect.DeepEqual(res.Replaced, []string{promptowner.Name}) {
				t.Fatalf("replaced by %v", res.Replaced)
			}
		})
	}
	// The owner rules after a chain member's replace (D19).
	walker := dispatch.Contribution{Manifest: intercept.Manifest{PluginID: "walker", Points: []intercept.Point{intercept.ProviderRequest}}, Extension: replacer()}
	res := dispatchReq(t, promptowner.Config{Prompt: "P", Mode: "append"}, `{"messages":[],"tools":[],"maxTokens":0}`, walker)
	if got := messages(t, res); !reflect.DeepEqual(got, []intercept.Message{sys("walker's prompt\n\nP")}) || !reflect.DeepEqual(res.Replaced, []string{"walker", promptowner.Name}) {
		t.Fatalf("messages %v replaced by %v", got, res.Replaced)
	}
}

// D11: a request that already carries the prompt is left byte for byte.
func TestAlreadySet_D11(t *testing.T) {
	req := `{"messages":[{"role":"system","content":"P"}], "tools":[], "maxTokens":0}`
	res := dispatchReq(t, promptowner.Config{Prompt: "P"}, req)
	if res.Changed || string(res.Payload) != `{"request":`+req+`}` {
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
