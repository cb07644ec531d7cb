package guardrail

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// refJSONTexts is the decoding reference jsonTexts must agree with: decode
// into maps, walk members in sorted key order.
func refJSONTexts(data []byte, all bool) []string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || (data[0] != '{' && data[0] != '[') {
		return nil
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	out := []string{}
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case string:
			if all || textKeys[key] {
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				walk(e, key)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k], k)
			}
		}
	}
	walk(v, "")
	return out
}

var textSeeds = []string{
	`{"choices":[{"index":0,"delta":{"content":" w1"}}]}`,
	`{"type":"content_block_delta","delta":{"type":"text_delta","text":"drop table"}}`,
	`{ "z" : { "text" : "b" } , "a" : [ {"content":"a1"}, {"content": ["x", 2, null, true]} ] }`,
	`{"text":"first","text":"second"}`,
	`{"text":"esc \"q\" \\ \u00e9 \ud83d\ude00","content":"caf\u00e9"}`,
	"{\"text\":\"raw \xff bytes\"}",
	`{"t\u0065xt":"escaped key","arguments":"{\"a\":1}"}`,
	`[1, "two", {"text": "three"}, [{"content": "four"}]]`,
	`{"content": 12.5e3, "text": false, "thinking": null, "partial_json": "{\"x\""}`,
	`{}`, `[]`, `{"a":{}}`, `  {"text":"pad"}  `, `{"text":"cut"`, `not json`, `"str"`, ``,
	"{\n\t\"text\"\r\n:\t\"ws\"\n}",
	// Members out of key order, repeated keys and nesting: the one-pass
	// walk reorders the texts each object added.
	`{"text":"z1","content":["c1",{"text":"c2","content":"c0"}],"arguments":"a1","text":"z2"}`,
	`{"b":{"text":"b1"},"a":{"text":"a1","content":"a0"},"b":{"content":"b2"}}`,
	`[{"text":"x","text":{"content":"y"}},{"c":{"text":"1"},"a":[{"text":"2"}]}]`,
}

// TestJSONTextsEveryChange: every cut and one-byte change of the seeds
// gives what decoding gives, and a failed scan leaves what was gathered
// before as it was.
func TestJSONTextsEveryChange(t *testing.T) {
	for _, in := range textSeeds {
		for i := range len(in) {
			for _, b := range [][]byte{[]byte(in[:i]), []byte(in[:i] + "," + in[i:]), []byte(in[:i] + "}" + in[i+1:]), []byte(in[:i] + "\"" + in[i+1:])} {
				for _, all := range []bool{false, true} {
					if got, want := jsonTexts(b, all), refJSONTexts(b, all); !slices.Equal(got, want) || (got == nil) != (want == nil) {
						t.Fatalf("jsonTexts(%q, %t) = %q, want %q", b, all, got, want)
					}
					before := []string{"kept"}
					out, ok := appendTexts(before, b, all)
					if want := refJSONTexts(b, all); !ok && (len(out) != 1 || out[0] != "kept" || want != nil) {
						t.Fatalf("appendTexts(%q) failed and left %q (reference %q)", b, out, want)
					}
				}
			}
		}
	}
	deep := strings.Repeat("[", maxDepth) + `{"text":"deep"}` + strings.Repeat("]", maxDepth)
	at := strings.Repeat("[", maxDepth-1) + `{"text":"at the limit"}` + strings.Repeat("]", maxDepth-1)
	for _, d := range []string{deep, "[" + deep + "]", at} {
		if got, want := jsonTexts([]byte(d), false), refJSONTexts([]byte(d), false); !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("nesting %d: jsonTexts = %q, want %q", strings.Count(d, "["), got, want)
		}
	}
}

// TestJSONTextsMatchesDecoding: the in-place scan gives exactly what
// decoding gives, with all and without.
func TestJSONTextsMatchesDecoding(t *testing.T) {
	for _, in := range textSeeds {
		for _, all := range []bool{false, true} {
			got, want := jsonTexts([]byte(in), all), refJSONTexts([]byte(in), all)
			if !slices.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("jsonTexts(%q, %t) = %q, want %q", in, all, got, want)
			}
		}
	}
}

func FuzzJSONTexts(f *testing.F) {
	for _, s := range textSeeds {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, all bool) {
		got, want := jsonTexts(in, all), refJSONTexts(in, all)
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("jsonTexts(%q, %t) = %q, want %q", in, all, got, want)
		}
	})
}

// TestLastRunes: the ASCII shortcut cuts where the rune walk does.
func TestLastRunes(t *testing.T) {
	walk := func(s string, n int) string {
		i := len(s)
		for k := 0; k < n && i > 0; k++ {
			_, size := utf8.DecodeLastRuneInString(s[:i])
			i -= size
		}
		return s[i:]
	}
	for _, s := range []string{"", "abc", "abcdef", "héllo world", "ab\xffcdef", "日本語のテキストabc", "abc日本", "x日bcd"} {
		for n := 0; n <= 8; n++ {
			if got, want := lastRunes(s, n), walk(s, n); got != want {
				t.Errorf("lastRunes(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// TestIsTextKey: the switch holds exactly the keys of textKeys.
func TestIsTextKey(t *testing.T) {
	for k := range textKeys {
		if !isTextKey([]byte(k)) {
			t.Errorf("isTextKey(%q) = false, want true", k)
		}
	}
	for _, k := range []string{"", "Content", "contents", "tex", "role", "reasoning", "type", "argument"} {
		if isTextKey([]byte(k)) != textKeys[k] {
			t.Errorf("isTextKey(%q) = %v, want %v", k, isTextKey([]byte(k)), textKeys[k])
		}
	}
}
