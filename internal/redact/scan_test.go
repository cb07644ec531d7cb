package redact

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestSeparatorsAsIndexAny: separators.next finds what bytes.IndexAny
// finds ("=:" or "="), for the rising offsets barePairs asks from.
func TestSeparatorsAsIndexAny(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 4))
	const alphabet = "ab=:=::\n"
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		for _, colon := range []bool{true, false} {
			set := "="
			if colon {
				set = "=:"
			}
			s := separators{colon: colon}
			for from := 0; from < len(b); from += 1 + rng.IntN(3) {
				want := bytes.IndexAny(b[from:], set)
				if want >= 0 {
					want += from
				}
				if got := s.next(b, from); got != want {
					t.Fatalf("next(%q, %d) with %q = %d, want %d", b, from, set, got, want)
				}
			}
		}
	}
}
