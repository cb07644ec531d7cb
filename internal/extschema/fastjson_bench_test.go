package extschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// BenchmarkDecodeCanonical takes an extension value shaped like the
// inference parser's result at the end of a 200-event stream (the
// request's messages, ~4.8 KB of content with newlines, usage) apart for
// the schema check and back to its canonical form for the trace:
// encoding/json is the path before decodeJSON and appendCanonical, fast
// the one after.
func BenchmarkDecodeCanonical(b *testing.B) {
	var content strings.Builder
	for i := range 200 {
		fmt.Fprintf(&content, "token %d of the answer\n", i)
	}
	v := struct {
		Request  map[string]any `json:"request"`
		Content  string         `json:"content"`
		Model    string         `json:"model"`
		Finish   string         `json:"finish_reason"`
		Usage    map[string]int `json:"usage"`
		Done     bool           `json:"done"`
		Choices  []any          `json:"choices"`
		Unknown  int            `json:"unknown_blocks"`
		Style    string         `json:"style"`
		Logprobs bool           `json:"logprobs"`
	}{
		Request: map[string]any{"model": "m", "stream": true, "messages": []any{map[string]any{"role": "user", "text": "hi"}}},
		Content: content.String(), Model: "m", Finish: "stop", Done: true, Style: "chat",
		Usage:   map[string]int{"input_tokens": 9, "output_tokens": 200, "total_tokens": 209},
		Choices: []any{map[string]any{"index": 0, "content": content.String(), "finish_reason": "stop"}},
	}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			j, _ := json.Marshal(v)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(v).Canonical(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
