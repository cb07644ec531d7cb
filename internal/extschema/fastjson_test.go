package extschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fastJSONSeeds are documents with every case decodeJSON and
// appendCanonical handle on their own: escapes of each kind, surrogate
// pairs and lone surrogates, invalid UTF-8, the characters json.Marshal
// escapes, repeated keys, empty containers, numbers of every shape, white
// space, and texts that are not JSON.
var fastJSONSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+10`, `-12.0E-3`, `123456789012345678901234567890`,
	`""`, `"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u0041\u00e9\u20ac"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`,
	`"\ude00\ud83d"`, `"\ud83d\u0041"`, "\"\xff\xfe\"", "\"caf\xc3\xa9 \xe2\x80\xa8 \xe2\x80\xa9\"", `"<a href='x'>&amp;</a>"`,
	"\"\x7f\"", `{"b":1,"a":2,"b":3}`, `{"z":{"y":[1,{"x":null}],"w":[]},"":""}`, ` { "a" : [ 1 , 2 ] } `,
	`{"content":"line one\nline two\ttabbed","usage":{"input_tokens":9,"output_tokens":3}}`,
	// Not JSON, or not as decodeJSON takes it: left to encoding/json.
	``, ` `, `{`, `[1,]`, `{"a":}`, `{"a" 1}`, `{"a":1,}`, `01`, `1.`, `.5`, `1e`, `-`, `tru`, `nulll`, `"a`,
	"\"a\x01b\"", `"\x"`, `"\u12"`, `"\u12zz"`, `"\'"`, `[1] [2]`, `{} x`, `{"a":1}}`,
}

// deepSeeds nest past maxFastDepth: encoding/json decides them.
var deepSeeds = []string{
	strings.Repeat("[", 1001) + strings.Repeat("]", 1001), strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// checkFast holds decodeJSON to jsonschema.UnmarshalJSON and
// appendCanonical to json.Marshal for one text.
func checkFast(t *testing.T, text []byte) {
	t.Helper()
	want, werr := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	got, ok := decodeJSON(text)
	if ok {
		if werr != nil {
			t.Fatalf("decodeJSON took %q, which UnmarshalJSON refuses: %v", text, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeJSON(%q) = %#v, UnmarshalJSON gives %#v", text, got, want)
		}
	}
	if werr != nil {
		return
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v", want, err)
	}
	gotJSON, ok := appendCanonical(nil, want)
	if !ok || !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("appendCanonical of %q = %q (%v), json.Marshal gives %q", text, gotJSON, ok, wantJSON)
	}
	// Decode's path as a whole: what Canonical gives for the text.
	d := Decoded{JSON: text}
	if d.Doc, ok = decodeJSON(text); !ok {
		d.Doc = want
	}
	if c, err := d.Canonical(); err != nil || !bytes.Equal(c, wantJSON) {
		t.Fatalf("Canonical of %q = %q, %v; want %q", text, c, err, wantJSON)
	}
}

func TestDecodeMatchesUnmarshalJSON(t *testing.T) {
	for _, s := range append(deepSeeds, fastJSONSeeds...) {
		checkFast(t, []byte(s))
	}
	// Every cut and every one-byte change of the seeds.
	bytesTried := []byte{'"', '\\', '{', '}', '[', ']', ',', ':', ' ', 'u', '0', 'e', '-', 0x01, 0xff, 0xc3}
	for _, s := range fastJSONSeeds {
		for i := range len(s) {
			checkFast(t, []byte(s[:i]))
			for _, c := range bytesTried {
				b := []byte(s)
				b[i] = c
				checkFast(t, b)
			}
		}
	}
}

func TestCanonicalMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		v := randomValue(r, 0)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		checkFast(t, b)
		checkFast(t, []byte(randomText(r, 0)))
	}
	// A value json.Marshal writes as it is, decoded by encoding/json: the
	// same document either way.
	if _, ok := appendCanonical(nil, struct{}{}); ok {
		t.Fatal("appendCanonical took a struct; it must leave it to json.Marshal")
	}
	if _, ok := appendCanonical(nil, json.Number("1x")); ok {
		t.Fatal("appendCanonical took an invalid json.Number")
	}
}

func FuzzDecodeCanonical(f *testing.F) {
	for _, s := range fastJSONSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkFast(t, b) })
}

// randomValue is a random document of the kinds an extension value
// marshals to, with strings of random bytes.
func randomValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(8); {
	case k == 0 && depth < 5:
		m := map[string]any{}
		for range r.IntN(5) {
			m[randomString(r)] = randomValue(r, depth+1)
		}
		return m
	case k == 1 && depth < 5:
		a := make([]any, r.IntN(5))
		for i := range a {
			a[i] = randomValue(r, depth+1)
		}
		return a
	case k == 2:
		return r.IntN(2) == 0
	case k == 3:
		return nil
	case k == 4:
		return json.Number(fmt.Sprint(r.NormFloat64() * 1e6))
	case k == 5:
		return r.Int64() - r.Int64()
	}
	return randomString(r)
}

// randomString draws bytes from the ones JSON strings treat specially.
func randomString(r *rand.Rand) string {
	parts := []string{"a", "Z", " ", "\"", "\\", "/", "<", ">", "&", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "€", "😀",
		"\u2028", "\u2029", "\xff", "\xc3", "\xed\xa0\x80", "\ufffd"}
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// randomText is random JSON text written by hand: escapes json.Marshal
// never writes (\/, \u0041, surrogates, upper-case hex), white space and
// repeated keys.
func randomText(r *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n\t", "\r "}[r.IntN(5)] }
	switch k := r.IntN(7); {
	case k == 0 && depth < 4:
		var parts []string
		keys := []string{`"a"`, `"b"`, `"\u0061"`, `"content"`}
		for range r.IntN(4) {
			parts = append(parts, ws()+keys[r.IntN(len(keys))]+ws()+":"+randomText(r, depth+1))
		}
		return ws() + "{" + strings.Join(parts, ",") + ws() + "}" + ws()
	case k == 1 && depth < 4:
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, randomText(r, depth+1))
		}
		return ws() + "[" + strings.Join(parts, ",") + ws() + "]" + ws()
	case k == 2:
		return []string{"true", "false", "null", "0", "-1.25E+3", "7e-2"}[r.IntN(6)]
	}
	esc := []string{`x`, `\/`, `\"`, `\\`, `\n`, `\u0041`, `\u00E9`, `\uD83D\uDE00`, `\ud83d`, `\ude00`, `\u2028`, `\u003c`, "é", "\xff"}
	var b strings.Builder
	b.WriteByte('"')
	for range r.IntN(6) {
		b.WriteString(esc[r.IntN(len(esc))])
	}
	b.WriteByte('"')
	return b.String()
}
