package redact

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refFind is what automaton.find must return: one search per pattern,
// case-folded or exact.
func refFind(pats []string, fold []bool, b []byte) uint64 {
	var found uint64
	lb := bytes.ToLower(b) // ASCII input: folds byte for byte
	for i, p := range pats {
		if fold[i] && bytes.Contains(lb, []byte(strings.ToLower(p))) || !fold[i] && bytes.Contains(b, []byte(p)) {
			found |= 1 << i
		}
	}
	return found
}

// TestAutomatonMatchesSearches: the one-pass automaton finds exactly the
// patterns one search per pattern finds, for the shape rules' trigger
// words (mixed exact and case-folded, overlapping: sk- and sk-ant-, the
// same :// for two rules), the key words, and texts built from pieces of
// them in random case.
func TestAutomatonMatchesSearches(t *testing.T) {
	var pats []string
	var fold []bool
	for _, r := range shapes {
		for _, tr := range r.triggers {
			pats, fold = append(pats, tr), append(fold, r.fold)
		}
	}
	keyFold := make([]bool, len(keyTriggers))
	for i := range keyFold {
		keyFold[i] = true
	}
	sets := []struct {
		a    *automaton
		pats []string
		fold []bool
	}{{shapeTriggers, pats, fold}, {keyTriggerSet, keyTriggers, keyFold}}
	rng := rand.New(rand.NewPCG(27, 1))
	for _, set := range sets {
		for range 20000 {
			var b []byte
			for range rng.IntN(8) {
				p := set.pats[rng.IntN(len(set.pats))]
				switch rng.IntN(4) {
				case 0: // a prefix only
					p = p[:rng.IntN(len(p))]
				case 1: // random case
					q := []byte(p)
					for i := range q {
						if rng.IntN(2) == 0 {
							q[i] = bytes.ToUpper(q[i : i+1])[0]
						} else {
							q[i] = bytes.ToLower(q[i : i+1])[0]
						}
					}
					p = string(q)
				}
				b = append(b, p...)
				if rng.IntN(3) == 0 {
					b = append(b, " xK-_:/."[rng.IntN(8)])
				}
			}
			want := refFind(set.pats, set.fold, b)
			if got := set.a.find(b); got != want {
				t.Fatalf("%q: found %b, want %b", b, got, want)
			}
			if set.a.fold == set.a.all {
				if got := set.a.any(b); got != (want != 0) {
					t.Fatalf("%q: any %v, want %v", b, got, want != 0)
				}
			}
		}
	}
}

// FuzzAutomaton holds both automatons to one search per pattern for any
// bytes (ASCII-folded where a pattern ignores case).
func FuzzAutomaton(f *testing.F) {
	f.Add([]byte("data: {\"content\":\"token 5 of the answer\"}\n\nBearer\tsk-ant-x EYJ ghp_ ://u@h"))
	f.Add([]byte("s\xffsk-\x00AKIAaKIAhf_/bot:AA"))
	foldASCII := func(b []byte) []byte {
		out := make([]byte, len(b))
		for i, c := range b {
			out[i] = lower(c)
		}
		return out
	}
	var pats []string
	var fold []bool
	for _, r := range shapes {
		for _, tr := range r.triggers {
			pats, fold = append(pats, tr), append(fold, r.fold)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lb := foldASCII(b)
		ref := func(pats []string, fold []bool) uint64 {
			var found uint64
			for i, p := range pats {
				if fold[i] && bytes.Contains(lb, []byte(strings.ToLower(p))) || !fold[i] && bytes.Contains(b, []byte(p)) {
					found |= 1 << i
				}
			}
			return found
		}
		if got, want := shapeTriggers.find(b), ref(pats, fold); got != want {
			t.Fatalf("%q: found %b, want %b", b, got, want)
		}
		keyFold := slices.Repeat([]bool{true}, len(keyTriggers))
		want := ref(keyTriggers, keyFold)
		if got := keyTriggerSet.find(b); got != want {
			t.Fatalf("%q: key words found %b, want %b", b, got, want)
		}
		if got := keyTriggerSet.any(b); got != (want != 0) {
			t.Fatalf("%q: any %v, want %v", b, got, want != 0)
		}
	})
}

// BenchmarkScanBody redacts a clean 200-event chat-completion stream and
// a clean JSON answer of the same text: the rules' trigger words and the
// pairs, no credential found.
func BenchmarkScanBody(b *testing.B) {
	var sse, js strings.Builder
	js.WriteString(`{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`)
	for i := range 200 {
		tok := []string{"The ", "basic ", "idea ", "behind ", "skipping ", "github ", "hooks ", "is ", "that ", "bots "}[i%10]
		sse.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + tok + `"},"finish_reason":null}]}` + "\n\n")
		js.WriteString(tok)
	}
	js.WriteString(`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":200}}`)
	// make bench-live's stream: a key word ("token") in every line's
	// text, after the line's last colon.
	var tokens strings.Builder
	for i := range 200 {
		fmt.Fprintf(&tokens, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token %d of the answer\"}}]}\n\n", i)
	}
	for _, c := range []struct{ name, ct, body string }{
		{"sse", "text/event-stream", sse.String()},
		{"sse-tokens", "text/event-stream", tokens.String()},
		{"json", "application/json", js.String()},
	} {
		body := []byte(c.body)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if es := ScanBody(c.ct, body); len(es) != 0 {
					b.Fatal(es)
				}
			}
		})
	}
}

// TestAnchoredRulesMatchWholeRegexp: a rule that tries its regexp only
// where a trigger word starts finds exactly the matches of the regexp
// run over the whole text, for texts of planted near-credentials glued
// with word and non-word bytes.
func TestAnchoredRulesMatchWholeRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	const tokenBytes = "aZ09_-.~+/=AKIASk"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = tokenBytes[rng.IntN(len(tokenBytes))]
		}
		return string(b)
	}
	starts := []string{"eyJ", "eyJabcdef.eyJ", "Bearer ", "bAsIc\t", "basic  ", "sk-ant-", "sk-", "sk_live_", "rk_test_", "ghp_", "github_pat_",
		"glpat-", "xoxb-", "AKIA", "ASIA", "AIza", "ya29.", "hf_", "bearer"}
	glue := []string{"", " ", "x", "_", "-", "\"", "\n", "=", ":"}
	n := 0
	for range 20000 {
		var b []byte
		for range 1 + rng.IntN(5) {
			b = append(b, glue[rng.IntN(len(glue))]...)
			b = append(b, starts[rng.IntN(len(starts))]...)
			b = append(b, word(rng.IntN(45))...)
		}
		for i := range shapes {
			r := &shapes[i]
			if r.at == nil {
				continue
			}
			n++
			got, want := r.matches(b), r.re.FindAllSubmatchIndex(b, -1)
			if len(got) != len(want) {
				t.Fatalf("%s on %q: %v, want %v", r.kind, b, got, want)
			}
			for j := range got {
				if !slices.Equal(got[j], want[j]) {
					t.Fatalf("%s on %q: %v, want %v", r.kind, b, got, want)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no rule has an anchored form")
	}
}
