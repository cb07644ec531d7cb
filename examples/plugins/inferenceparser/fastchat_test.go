package inferenceparser

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/abkit/abkit/sdk/sse"
)

// fastChatSeeds are chat-completions chunks (the fast path's shape) and
// near misses it must decline or decode exactly as encoding/json does.
var fastChatSeeds = []string{
	`{"choices":[{"index":0,"delta":{"content":" w1"}}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	`{"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a","refusal":null}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"caf\u00e9 \"q\"\n"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\xc3\xa9 \xff\"}}]}",
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think","content":null}}]}`,
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"step"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":null,"reasoning":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":{"text":"x"}}}]}`,
	`{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]}]}}]}`,
	`{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":"{"}}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":null,"refusal":null}}]}`,
	`{"choices":[]}`, `{}`, `{"choices":null}`, `{"choices":[{}]}`, `{"choices":[{"delta":null}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}]} x`, `{"choices":[{"index":0,"delta":{"content":"a"}}]`,
	`{"choices":[{"index":01,"delta":{}}]}`, `{"choices":[{"index":1.5,"delta":{}}]}`, `{"choices":[{"index":-1}]}`,
	`{"choices":[{"index":99999999999999999999}]}`, `{"created":1.5,"choices":[]}`,
	`{"Choices":[{"index":0,"delta":{"content":"a"}}]}`, `{"choices":[{"index":0,"delta":{"Content":"a"}}]}`,
	`{"id":"a","id":"b","choices":[]}`, `{"choices":[{"index":0,"index":1}]}`,
	`{"\u0063hoices":[]}`, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[]}}]}`,
	`{"usage":{"prompt_tokens":1},"choices":[]}`, `{"type":"x","choices":[]}`, `{"jsonrpc":"2.0"}`,
	`{"choices":[{"index":0,"delta":{"content":"a` + "\x01" + `"}}]}`, `{"id":null,"choices":[]}`,
	`{"choices":[{"index":0,"finish_reason":"length","delta":{"content":"x"}}],"obfuscation":"ab\u0041"}`,
	`{"model":"m","service_tier":"default","choices":[{"index":0,"delta":{"role":null}}]}`,
}

// checkFastChat fails when the fast path accepts data but decodes it other
// than encoding/json does.
func checkFastChat(t *testing.T, data []byte) bool {
	t.Helper()
	var f fastChat
	var got wire
	if !f.decode(data, &got) {
		return false
	}
	var want wire
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("fast path accepted %q, encoding/json fails: %v", data, err)
	}
	if len(got.Choices) == 0 && got.Choices != nil && want.Choices != nil {
		got.Choices, want.Choices = []wireChoice{}, []wireChoice{} // both empty, non-nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast path on %q:\n got %+v\nwant %+v", data, got, want)
	}
	return true
}

func TestFastChatMatchesEncodingJSON(t *testing.T) {
	accepted := 0
	for _, s := range fastChatSeeds {
		if checkFastChat(t, []byte(s)) {
			accepted++
		}
	}
	if accepted < 10 {
		t.Errorf("the fast path took %d of the seeds; the common chunk shapes should take it", accepted)
	}
}

func FuzzFastChat(f *testing.F) {
	for _, s := range fastChatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFastChat(t, data) })
}

// TestChatEventAllocs pins the fast path's point: a chat-completions delta
// event is folded without allocating.
func TestChatEventAllocs(t *testing.T) {
	a := &aggregator{}
	ev := sse.Event{Data: `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":" w"},"finish_reason":null}]}`, HasData: true}
	a.Event(ev) // the first event sets the id, model and choice
	for i := 0; i < 64; i++ {
		a.Event(ev) // grow the content builder past small sizes
	}
	if n := testing.AllocsPerRun(1000, func() { a.Event(ev) }); n > 0.1 {
		t.Errorf("a chat delta event: %v allocations, want 0 (the content builder's growth aside)", n)
	}
}

// TestReleaseLeavesWireZero: after every event, taken by the fast path or
// not, the reused wire is zero again (the fast path decodes into a zero
// wire, and release clears only what it set).
func TestReleaseLeavesWireZero(t *testing.T) {
	a := &aggregator{}
	for _, s := range append(fastChatSeeds, `{"type":"message_start","message":{"id":"m","model":"c"}}`, `not json`) {
		a.Event(sse.Event{Data: s, HasData: true})
		if !reflect.ValueOf(a.w).IsZero() {
			t.Fatalf("after %q the wire is %+v, want zero", s, a.w)
		}
	}
}
