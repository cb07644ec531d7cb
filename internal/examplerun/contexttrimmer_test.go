package examplerun_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abkit/abkit/examples/plugins/contexttrimmer"
	"github.com/abkit/abkit/internal/dispatch"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/intercept"
)

func run(t *testing.T, c contexttrimmer.Config, payload string) dispatch.Result {
	t.Helper()
	ext, err := contexttrimmer.New(c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.New([]dispatch.Contribution{{Manifest: contexttrimmer.Manifest(), Extension: ext}}, dispatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := d.Dispatch(context.Background(), dispatch.Request{Point: intercept.ContextPrepare, Payload: json.RawMessage(payload)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func roles(t *testing.T, res dispatch.Result) []string {
	t.Helper()
	var p struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(res.Payload, &p); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range p.Messages {
		out = append(out, m.Role+m.Content)
	}
	return out
}

// D8: the trimmer replaces the payload with the system message and the
// last messages, skipping an orphaned tool result; the dispatcher strictly
// accepts the replacement.
func TestTrims_D8(t *testing.T) {
	payload := `{"messages":[{"role":"system","content":"0"},{"role":"user","content":"1"},{"role":"assistant","content":"2"},{"role":"tool","content":"3","tool_call_id":"c"},{"role":"assistant","content":"4"},{"role":"user","content":"5"}]}`
	res := run(t, contexttrimmer.Config{Keep: 3}, payload)
	if !res.Changed || len(res.Replaced) != 1 || res.Replaced[0] != contexttrimmer.Name {
		t.Fatalf("result %+v", res)
	}
	got := roles(t, res)
	want := []string{"system0", "assistant4", "user5"} // tool3 lost its call
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("kept %v, want %v", got, want)
	}
	// drop_system: the system message counts like any other.
	if got := roles(t, run(t, contexttrimmer.Config{Keep: 2, DropSystem: true}, payload)); len(got) != 2 || got[0] != "assistant4" {
		t.Fatalf("drop_system kept %v", got)
	}
}

// D11: under the limit the extension continues and the host keeps its
// bytes exactly.
func TestShortContextUnchanged_D11(t *testing.T) {
	payload := `{"messages": [ {"role":"user","content":"hi"} ]}`
	res := run(t, contexttrimmer.Config{Keep: 3}, payload)
	if res.Changed || string(res.Payload) != payload {
		t.Fatalf("changed=%v payload %s", res.Changed, res.Payload)
	}
}

// Config and P5.
func TestConfigAndPlugin_P5(t *testing.T) {
	if _, err := contexttrimmer.New(contexttrimmer.Config{}); err == nil {
		t.Fatal("keep 0 accepted")
	}
	p := contexttrimmer.Plugin()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := gateway.CheckDescription(p.Description); err != nil {
		t.Fatal(err)
	}
}
