package guardrail

import (
	"bytes"
	"slices"
	"testing"
)

// chunkSeeds are chunks of the shapes chunkTexts knows and near misses it
// must decline or read exactly as the walker does.
var chunkSeeds = []string{
	`{"choices":[{"index":0,"delta":{"content":"token 17 of the answer"}}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	`{"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a","refusal":null}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"caf\u00e9 \"q\"\n"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\xc3\xa9 \xff\"}}]}",
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think","content":"say"}}]}`,
	`{"choices":[{"index":0,"delta":{"thinking":"t","text":"x","partial_json":"{","content":null,"reasoning_content":"r"}}]}`,
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"step"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":["x"]}}]}`, `{"choices":[{"index":0,"delta":{"content":1}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}`,
	`{"choices":[],"delta":{"text":"x"}}`, `{"delta":{"text":"x"},"choices":[{"delta":{"content":"y"}}]}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"drop table"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}`,
	`{"choices":[]}`, `{}`, `{"choices":null}`, `{"choices":[{}]}`, `{"choices":[{"delta":null}]}`, `{"choices":[1]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}]} x`, `{"choices":[{"index":0,"delta":{"content":"a"}}]`,
	`{"choices":[{"index":01,"delta":{}}]}`, `{"choices":[{"index":1.5e3,"delta":{}}]}`, `{"choices":[{"index":-}]}`,
	`{"Choices":[{"index":0,"delta":{"content":"a"}}]}`, `{"choices":[{"index":0,"delta":{"Content":"a"}}]}`,
	`{"id":"a","id":"b","choices":[]}`, `{"choices":[{"index":0,"index":1}]}`, `{"\u0063hoices":[]}`,
	`{"choices":[{"index":0,"delta":{"c\u006fntent":"a"}}]}`, `{"choices": [{"index":0,"delta":{"content":"a"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a` + "\x01" + `"}}]}`, `{"id":null,"choices":[]}`, `{"id":nul}`,
	`{"choices":[{"index":0,"finish_reason":"length","delta":{"content":"x"}}],"obfuscation":"ab\u0041"}`,
	`{"usage":{"prompt_tokens":1},"choices":[]}`, `{"choices":[{"logprobs":{"content":null}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\u00"}}]}`, `{"choices":[{"index":0,"delta":{"content":"\x"}}]}`,
}

// checkChunk fails when chunkTexts reads data other than the walker does,
// or declines and leaves out changed; it reports whether it read data.
func checkChunk(t *testing.T, data []byte) bool {
	t.Helper()
	data = bytes.TrimSpace(data)
	before := []string{"kept"}
	got, ok := chunkTexts(before, data)
	if !ok {
		if len(got) != 1 || got[0] != "kept" {
			t.Fatalf("chunkTexts(%q) declined and left %q", data, got)
		}
		return false
	}
	if len(data) == 0 || (data[0] != '{' && data[0] != '[') {
		t.Fatalf("chunkTexts(%q) read what appendTexts does not walk", data)
	}
	want, wok := walkTexts([]string{"kept"}, data, false)
	if !wok || !slices.Equal(got, want) {
		t.Fatalf("chunkTexts(%q) = %q, the walker %q (ok %t)", data, got, want, wok)
	}
	return true
}

// TestChunkTextsMatchesWalker: for the seeds and every cut and one-byte
// change of them, chunkTexts reads what the walker reads or declines; and
// the common shapes take it.
func TestChunkTextsMatchesWalker(t *testing.T) {
	accepted := 0
	for _, in := range chunkSeeds {
		if checkChunk(t, []byte(in)) {
			accepted++
		}
		for i := range len(in) {
			for _, b := range []string{in[:i], in[:i] + "," + in[i:], in[:i] + "}" + in[i+1:], in[:i] + "\"" + in[i+1:], in[:i] + "n" + in[i+1:], in[:i] + "0" + in[i+1:]} {
				checkChunk(t, []byte(b))
			}
		}
	}
	if accepted < 15 {
		t.Errorf("chunkTexts read %d of the seeds; the common chunk shapes should take it", accepted)
	}
}

func FuzzChunkTexts(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkChunk(t, data) })
}
