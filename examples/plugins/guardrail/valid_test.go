package guardrail

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

var validSeeds = append([]string{
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-12.5e3`, `.5`, `+1`, `1 2`, `true`, `tru`, `nul`, `falsey`,
	`""`, `"\u00e9"`, `"\u00g9"`, `"\x"`, `"a` + "\x01" + `b"`, `"\/"`, "\"\xff\"", `"`, `"\`, `"\u12"`,
	`[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `{}`, `{ }`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":[{"b":null}]}`,
	" \t\r\n{} \n", "{}\x00", `[[[[]]]]`, `[[[]]`, `{"a":{"b":{}}}}`,
}, textSeeds...)

// TestValidJSONMatchesEncodingJSON: validJSON accepts exactly what
// encoding/json.Valid accepts, for the seeds, every cut and every one-byte
// change of them, random texts of JSON punctuation, and nesting at and
// past encoding/json's limit.
func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, want %v", b, got, want)
		}
	}
	for _, s := range validSeeds {
		b := []byte(s)
		check(b)
		for n := range len(b) {
			check(b[:n])
		}
		for i := range b {
			for _, c := range []byte{' ', '"', '\\', '0', '1', '-', 'e', '.', ',', ':', '}', ']', 0x1f, 'u'} {
				m := append([]byte(nil), b...)
				m[i] = c
				check(m)
			}
		}
	}
	rng := rand.New(rand.NewPCG(27, 3))
	const alphabet = `{}[],:"\ 0123456789-+.eEtrufalsn` + "\t\n"
	for range 200000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(b)
	}
	for _, n := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		check([]byte(strings.Repeat("[", n) + strings.Repeat("]", n)))
		check([]byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)))
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, want %v", b, got, want)
		}
	})
}
