package guardrail

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// refCheck is the verdict check must give: the carried text joined with
// the new text, folded whole, every phrase searched in all of it, the
// tail cut from the joined original.
type refCheck struct {
	p    *Guardrail
	tail string
	hit  string
}

func (r *refCheck) check(text string) {
	if r.hit != "" || text == "" {
		return
	}
	s := r.tail + text
	if label, ok := r.p.match(s); ok {
		r.hit = label
		return
	}
	r.tail = lastRunes(s, r.p.window)
}

// TestCheckIncrementalMatchesWhole: searching only where a phrase can end
// in the new text, with the tail kept folded, gives the verdict (which
// rule, at which text) of folding and searching the whole joined text,
// for phrases split across events, mixed case, non-ASCII letters whose
// fold changes their length, and invalid UTF-8.
func TestCheckIncrementalMatchesWhole(t *testing.T) {
	pieces := []string{"drop", " ", "ta", "ble", "DROP T", "ABLE", "İ", "ß", "Straße", "\xe2\x82", "\xac", "\xff",
		"x", "dr", "op table", "é", "É", "k", "K", "\u212a" /* the Kelvin sign folds to k */, "rm -", "rf /", "ignore previous", " instructions"}
	for _, c := range []Config{
		{Phrases: []string{"drop table", "rm -rf /"}, Window: 4},
		{Phrases: []string{"drop table", "straße"}, Window: 1},
		{Phrases: []string{"Drop Table"}, CaseSensitive: true, Window: 3},
		{Phrases: []string{"éé", "kk"}, Patterns: []string{`ignore\s+previous\s+instructions`}, Window: 8},
		{Phrases: []string{"€x"}, Window: 2},
	} {
		p, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, uint64(len(c.Phrases))))
		for round := range 3000 {
			// The buffers newState cuts from one array, and buffers that
			// start empty: an append past a cut's room must not reach the
			// next one.
			st := newState(p)
			if round%2 == 1 {
				st = &state{p: p, tailValid: true, tailASCII: true}
			}
			ref := &refCheck{p: p}
			var seq []string
			for k := range 1 + rng.IntN(12) {
				text := pieces[rng.IntN(len(pieces))]
				if rng.IntN(3) == 0 {
					text += pieces[rng.IntN(len(pieces))]
				}
				seq = append(seq, text)
				st.check(text)
				ref.check(text)
				if st.hit != ref.hit {
					t.Fatalf("config %+v, round %d, text %d of %q: hit %q, want %q", c, round, k, seq, st.hit, ref.hit)
				}
				if st.hit == "" && string(st.tail) != ref.tail {
					t.Fatalf("config %+v, round %d, %q: tail %q, want %q", c, round, seq, st.tail, ref.tail)
				}
				if st.hit == "" && p.fold && st.tailValid && string(st.ftail) != strings.ToLower(ref.tail) {
					t.Fatalf("config %+v, round %d, %q: folded tail %q, want %q", c, round, seq, st.ftail, strings.ToLower(ref.tail))
				}
			}
		}
	}
}
