package termsafe

import (
	"encoding/json"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, é ü 日本", "plain text, é ü 日本"},
		{"tab\tand\nnewline", "tab\tand\nnewline"},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`},
		{"red \x1b[31mX\x1b[0m", `red \x1b[31mX\x1b[0m`},
		{"cr\rover", `cr\x0dover`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eevil", `bidi \u202eevil`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"nul\x00", `nul\x00`},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Line("a\tb\nc\x1b"); got != `a\tb\nc\x1b` {
		t.Errorf("Line: %q", got)
	}
}

func TestFields(t *testing.T) {
	type inner struct {
		Desc string
		Tags []string
		M    map[string]any
	}
	type outer struct {
		Name  string
		In    *inner
		Items []inner
		priv  string
	}
	v := &outer{Name: "a\x1b[2J", In: &inner{Desc: "\x1b]0;t\x07", Tags: []string{"\x07"}, M: map[string]any{"k\x1b": "v\x1b", "n": 1}},
		Items: []inner{{Desc: "\u009b"}}, priv: "\x1b"}
	Fields(v)
	if v.Name != `a\x1b[2J` || v.In.Desc != `\x1b]0;t\x07` || v.In.Tags[0] != `\x07` || v.Items[0].Desc != `\u009b` {
		t.Errorf("%+v %+v", v, v.In)
	}
	if v.In.M[`k\x1b`] != `v\x1b` || v.In.M["n"] != 1 || len(v.In.M) != 2 {
		t.Errorf("map %v", v.In.M)
	}
	if v.priv != "\x1b" {
		t.Error("unexported field changed")
	}
}

// JSON escapes what encoding/json leaves raw and a terminal acts on (C1
// controls, bidi overrides), and the JSON still decodes to the same text.
func TestJSONEscapesC1AndBidi(t *testing.T) {
	in := "x\u009b31m\u202eevil\u2066é"
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(b)
	if string(out) != `"x\u009b31m\u202eevil\u2066é"` {
		t.Fatalf("JSON(%s) = %s", b, out)
	}
	var back string
	if err := json.Unmarshal(out, &back); err != nil || back != in {
		t.Fatalf("decodes to %q, %v", back, err)
	}
	if plain := []byte(`{"a":"b"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("safe JSON was copied")
	}
}
