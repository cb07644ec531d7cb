package dispatch

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/abkit/abkit/sdk/intercept"
)

// FuzzDecodeReplacement checks the strict replacement decoder (D8): it
// never panics; what it accepts is a JSON object that validates, whose
// canonical form decodes strictly to the same canonical form.
func FuzzDecodeReplacement(f *testing.F) {
	seeds := []struct {
		point intercept.Point
		data  string
	}{
		{intercept.InputReceive, `{"text":"hi"}`},
		{intercept.InputReceive, `{"text":""}`},
		{intercept.InputReceive, `{"Text":"hi"}`},
		{intercept.InputReceive, `{"text":"a","text":"b"}`},
		{intercept.AgentBeforeStart, `{"model":"m","toolCount":3,"sessionId":"s"}`},
		{intercept.AgentBeforeStart, `{"toolCount":1.5,"sessionId":"s"}`},
		{intercept.ContextPrepare, `{"messages":[{"role":"user","content":"x"}]}`},
		{intercept.CompactionPrepare, `{"messages":[{"role":"user","content":"x"}],"guidance":"g"}`},
		{intercept.ContextPrepare, `{"messages":{}}`},
		{intercept.ProviderRequest, `{"request":{"messages":[],"tools":[{"name":"ls","parameters":{}}],"maxTokens":1}}`},
		{intercept.ProviderResponse, `{"text":"t","calls":[{"id":"1","name":"ls","arguments":"{}"}],"usage":{"promptTokens":1}}`},
		{intercept.ProviderResponse, `{"calls":[{"Name":"ls"}]}`},
		{intercept.ToolBefore, `{"name":"ls","arguments":"{\"a\":[1,2]}"}`},
		{intercept.ToolBefore, `{"name":"ls"} trailing`},
		{intercept.ToolAfter, `{"name":"ls","result":"out","isError":true}`},
		{intercept.PermissionDecision, `{"name":"rm","readOnly":false,"hostDecision":"deny"}`},
		{intercept.PermissionDecision, `{"name":"rm","hostDecision":"maybe"}`},
		{intercept.CompactionComplete, `{"summary":"s"}`},
		{intercept.SessionStart, `{"sessionPath":"/x","phase":"start"}`},
		{intercept.FrontendEvent, `{"kind":"k","text":"t","detail":{"x":1}}`},
		{intercept.ToolBefore, "\xff{"},
		{intercept.ToolBefore, `{"name":"\ud800"}`},
	}
	pts := intercept.Points()
	for _, s := range seeds {
		for i, p := range pts {
			if p == s.point {
				f.Add(uint8(i), []byte(s.data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, pi uint8, data []byte) {
		point := pts[int(pi)%len(pts)]
		v, canon, err := decodeReplacement(point, data)
		if err != nil {
			return
		}
		if err := v.Validate(point); err != nil {
			t.Fatalf("accepted an invalid payload %q: %v", data, err)
		}
		if len(bytes.TrimSpace(data)) == 0 || bytes.TrimSpace(data)[0] != '{' {
			t.Fatalf("accepted a non-object %q", data)
		}
		v2, canon2, err := decodeReplacement(point, canon)
		if err != nil {
			t.Fatalf("canonical form %q of %q rejected: %v", canon, data, err)
		}
		if !bytes.Equal(canon, canon2) {
			t.Fatalf("canonical form not stable: %q vs %q", canon, canon2)
		}
		if !json.Valid(canon) || v2 == nil {
			t.Fatalf("bad canonical %q", canon)
		}
	})
}
