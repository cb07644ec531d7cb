package sse

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// refFrame is a deliberately naive, byte-at-a-time model of the P19 framing
// rules, used as an oracle for the Framer.
func refFrame(in []byte) (blocks []block, unterm int) {
	start, lineStart, first, data := 0, 0, true, false
	for i := 0; i < len(in); {
		c := in[i]
		if c != '\n' && c != '\r' {
			i++
			continue
		}
		line := in[lineStart:i]
		end := i + 1
		if c == '\r' && end < len(in) && in[end] == '\n' {
			end++
		}
		if first {
			first = false
			line = bytes.TrimPrefix(line, []byte(bomS))
		}
		switch {
		case len(line) == 0:
			blocks = append(blocks, block{string(in[start:end]), data})
			start, data = end, false
		case string(line) == "data" || bytes.HasPrefix(line, []byte("data:")):
			data = true
		}
		i, lineStart = end, end
	}
	if start < len(in) {
		blocks = append(blocks, block{string(in[start:]), false})
		unterm = len(in) - start
	}
	return blocks, unterm
}

func sameBlocks(a, b []block) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzFramer checks the P19 invariants on arbitrary input: the emitted blocks
// concatenate to the input; one chunk, a random split and 1-byte chunks give
// the same blocks and End result, which match a naive reference model; and
// every frame parses with data present (and a complete non-frame without).
func FuzzFramer(f *testing.F) {
	for _, tc := range framerCases() {
		// Large inputs make minimizing new inputs slow; the table tests cover them.
		if len(tc.in) <= 256 {
			f.Add([]byte(tc.in), uint64(len(tc.in)))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		one, n1 := feedChunks(t, [][]byte{in})

		var all bytes.Buffer
		for _, b := range one {
			all.WriteString(b.raw)
		}
		if !bytes.Equal(all.Bytes(), in) {
			t.Fatalf("concatenated blocks %q differ from input %q", all.Bytes(), in)
		}

		want, wantN := refFrame(in)
		if !sameBlocks(one, want) || n1 != wantN {
			t.Fatalf("one chunk: got %v (unterminated %d), reference %v (%d)", one, n1, want, wantN)
		}

		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		var chunks [][]byte
		for rest := in; len(rest) > 0; {
			k := rng.IntN(min(len(rest), 64) + 1) // may be 0: empty chunks are legal
			chunks = append(chunks, rest[:k])
			rest = rest[k:]
		}
		split, n2 := feedChunks(t, chunks)
		if !sameBlocks(split, one) || n2 != n1 {
			t.Fatalf("random split %q: got %v (unterminated %d), one chunk gave %v (%d)", chunks, split, n2, one, n1)
		}
		bytewise, n3 := feedChunks(t, splitEvery(in, 1))
		if !sameBlocks(bytewise, one) || n3 != n1 {
			t.Fatalf("1-byte chunks: got %v (unterminated %d), one chunk gave %v (%d)", bytewise, n3, one, n1)
		}

		for i, b := range one {
			hasData := Parse([]byte(b.raw)).HasData
			if b.frame && !hasData {
				t.Fatalf("frame %d %q parses without data", i, b.raw)
			}
			// A complete non-frame parses without data too, unless it is a later
			// block starting with a BOM (Parse cannot tell it from a first block).
			complete := n1 == 0 || i < len(one)-1
			if complete && !b.frame && hasData && !(i > 0 && bytes.HasPrefix([]byte(b.raw), []byte(bomS))) {
				t.Fatalf("non-frame block %d %q parses with data", i, b.raw)
			}
		}
	})
}
