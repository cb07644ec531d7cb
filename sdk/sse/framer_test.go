package sse

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// block is one emitted block, copied out of the callback.
type block struct {
	raw   string
	frame bool
}

func (b block) String() string { return fmt.Sprintf("{%q frame=%v}", b.raw, b.frame) }

// feedChunks feeds chunks to a fresh Framer, then calls End, and returns every
// emitted block (copied, since raw is only valid during emit) and End's count.
func feedChunks(t testing.TB, chunks [][]byte) ([]block, int) {
	t.Helper()
	var f Framer
	var got []block
	emit := func(raw []byte, isFrame bool) error {
		got = append(got, block{string(raw), isFrame})
		return nil
	}
	for _, c := range chunks {
		if err := f.Feed(c, emit); err != nil {
			t.Fatalf("Feed: %v", err)
		}
	}
	n, err := f.End(emit)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	return got, n
}

// splitEvery cuts in into chunks of size n (the last may be shorter).
func splitEvery(in []byte, n int) [][]byte {
	var out [][]byte
	for len(in) > n {
		out = append(out, in[:n])
		in = in[n:]
	}
	return append(out, in)
}

type framerCase struct {
	name   string
	in     string
	want   []block
	unterm int
}

const bomS = "\xEF\xBB\xBF"

func manyEvents(n int) (string, []block) {
	var sb strings.Builder
	var want []block
	for i := range n {
		ev := fmt.Sprintf("data: {\"choices\":[{\"delta\":{\"content\":\"w%d\"}}]}\n\n", i)
		sb.WriteString(ev)
		want = append(want, block{ev, true})
	}
	return sb.String(), want
}

// framerCases covers the framing rules of P19.
func framerCases() []framerCase {
	many, manyWant := manyEvents(100)
	big := "data: " + strings.Repeat("x", 5000) + "\ndata: " + strings.Repeat("y", 3000) + "\r\n\r\n"
	return []framerCase{
		{name: "empty stream", in: "", want: nil},
		{name: "LF", in: "data: a\n\n", want: []block{{"data: a\n\n", true}}},
		{name: "CR", in: "data: a\r\r", want: []block{{"data: a\r\r", true}}},
		{name: "CRLF", in: "data: a\r\n\r\n", want: []block{{"data: a\r\n\r\n", true}}},
		{name: "mixed line ends", in: "data: a\r\nid: 1\rdata: b\n\r\nevent: x\n\n",
			want: []block{{"data: a\r\nid: 1\rdata: b\n\r\n", true}, {"event: x\n\n", false}}},
		{name: "CRLF then LF blank", in: "data: a\r\n\n", want: []block{{"data: a\r\n\n", true}}},
		{name: "CR blank then next block", in: "data: a\n\rdata: b\n\n",
			want: []block{{"data: a\n\r", true}, {"data: b\n\n", true}}},
		{name: "CR blank at stream end", in: "data: a\r\n\r", want: []block{{"data: a\r\n\r", true}}},
		{name: "CR blank lines", in: "data: a\r\r\r", want: []block{{"data: a\r\r", true}, {"\r", false}}},
		{name: "CR CR LF", in: "data: a\r\r\n", want: []block{{"data: a\r\r\n", true}}},
		{name: "blank lines only", in: "\n\n\r\n\r",
			want: []block{{"\n", false}, {"\n", false}, {"\r\n", false}, {"\r", false}}},
		{name: "BOM", in: bomS + "data: a\n\n", want: []block{{bomS + "data: a\n\n", true}}},
		{name: "BOM then blank line", in: bomS + "\ndata: a\n\n",
			want: []block{{bomS + "\n", false}, {"data: a\n\n", true}}},
		{name: "BOM CRLF", in: bomS + "data\r\n\r\n", want: []block{{bomS + "data\r\n\r\n", true}}},
		{name: "BOM only at stream start", in: "data: a\n\n" + bomS + "data: b\n\n",
			want: []block{{"data: a\n\n", true}, {bomS + "data: b\n\n", false}}},
		{name: "BOM line in a later block", in: "data: a\n\n" + bomS + "\ndata: b\n\n",
			want: []block{{"data: a\n\n", true}, {bomS + "\ndata: b\n\n", true}}},
		{name: "partial BOM is content", in: "\xEF\xBBdata: a\n\n", want: []block{{"\xEF\xBBdata: a\n\n", false}}},
		{name: "double BOM", in: bomS + bomS + "data: a\n\n", want: []block{{bomS + bomS + "data: a\n\n", false}}},
		{name: "BOM alone unterminated", in: bomS, want: []block{{bomS, false}}, unterm: 3},
		{name: "comment only", in: ": ping\n\n", want: []block{{": ping\n\n", false}}},
		{name: "comments then data", in: ": a\n:b\ndata: x\n\n", want: []block{{": a\n:b\ndata: x\n\n", true}}},
		{name: "id only", in: "id: 3\n\n", want: []block{{"id: 3\n\n", false}}},
		{name: "retry only", in: "retry: 10\n\n", want: []block{{"retry: 10\n\n", false}}},
		{name: "event only", in: "event: ping\n\n", want: []block{{"event: ping\n\n", false}}},
		{name: "multi-line data", in: "data: a\ndata: b\ndata\n\n", want: []block{{"data: a\ndata: b\ndata\n\n", true}}},
		{name: "data without colon", in: "data\n\n", want: []block{{"data\n\n", true}}},
		{name: "data empty value", in: "data:\n\n", want: []block{{"data:\n\n", true}}},
		{name: "field without colon not data", in: "id\nevent\n\n", want: []block{{"id\nevent\n\n", false}}},
		{name: "near-data field names", in: "dat\ndatax\ndata \nDATA: x\n data: x\n\n",
			want: []block{{"dat\ndatax\ndata \nDATA: x\n data: x\n\n", false}}},
		{name: "data after other fields", in: "event: e\nid: 1\ndata: x\n\n", want: []block{{"event: e\nid: 1\ndata: x\n\n", true}}},
		{name: "unterminated final block", in: "data: a\n\ndata: b\n",
			want: []block{{"data: a\n\n", true}, {"data: b\n", false}}, unterm: 8},
		{name: "unterminated partial line", in: "data: b", want: []block{{"data: b", false}}, unterm: 7},
		{name: "unterminated after CR line end", in: "data: b\r", want: []block{{"data: b\r", false}}, unterm: 8},
		{name: "unterminated after CRLF", in: "id: 1\r\ndata: b\r\n", want: []block{{"id: 1\r\ndata: b\r\n", false}}, unterm: 16},
		{name: "many blocks in one chunk", in: many, want: manyWant},
		{name: "one big block", in: big, want: []block{{big, true}}},
	}
}

// TestFramerTable checks exact raw bytes and isFrame for every P19 framing rule,
// feeding each input as one chunk.
func TestFramerTable(t *testing.T) {
	for _, tc := range framerCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, n := feedChunks(t, [][]byte{[]byte(tc.in)})
			checkBlocks(t, "one chunk", got, n, tc)
		})
	}
}

// TestFramerChunkingIndependence checks (P19) that splitting every table
// input at every byte position, and feeding it in 1-, 2- and 3-byte chunks
// (with empty chunks interleaved), emits identical blocks and End results.
func TestFramerChunkingIndependence(t *testing.T) {
	for _, tc := range framerCases() {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			for i := 0; i <= len(in); i++ {
				got, n := feedChunks(t, [][]byte{in[:i], in[i:]})
				checkBlocks(t, fmt.Sprintf("split at %d", i), got, n, tc)
				if t.Failed() {
					return
				}
			}
			for _, size := range []int{1, 2, 3, 7, smallChunk, smallChunk + 1} {
				got, n := feedChunks(t, splitEvery(in, size))
				checkBlocks(t, fmt.Sprintf("%d-byte chunks", size), got, n, tc)
			}
			var withEmpty [][]byte
			for _, c := range splitEvery(in, 2) {
				withEmpty = append(withEmpty, nil, c, []byte{})
			}
			got, n := feedChunks(t, withEmpty)
			checkBlocks(t, "empty chunks interleaved", got, n, tc)
		})
	}
}

func checkBlocks(t *testing.T, how string, got []block, n int, tc framerCase) {
	t.Helper()
	if n != tc.unterm {
		t.Errorf("%s: End returned unterminated=%d, want %d", how, n, tc.unterm)
	}
	if len(got) != len(tc.want) {
		t.Errorf("%s: got %d blocks %v, want %d %v", how, len(got), got, len(tc.want), tc.want)
		return
	}
	for i := range got {
		if got[i] != tc.want[i] {
			t.Errorf("%s: block %d = %q (frame %v), want %q (frame %v)",
				how, i, got[i].raw, got[i].frame, tc.want[i].raw, tc.want[i].frame)
		}
	}
	var all strings.Builder
	for _, b := range got {
		all.WriteString(b.raw)
	}
	if all.String() != tc.in {
		t.Errorf("%s: concatenated blocks %q differ from input %q", how, all.String(), tc.in)
	}
}

// TestFramerCRHold checks the P19 CR decision: a block ended by a CR at the
// end of a chunk is held until the next byte or End, and a following LF
// joins that block.
func TestFramerCRHold(t *testing.T) {
	var f Framer
	var got []block
	emit := func(raw []byte, isFrame bool) error {
		got = append(got, block{string(raw), isFrame})
		return nil
	}
	mustFeed := func(s string) {
		t.Helper()
		if err := f.Feed([]byte(s), emit); err != nil {
			t.Fatal(err)
		}
	}
	mustFeed("data: a\r\r")
	if len(got) != 0 {
		t.Fatalf("block ended by a CR at the chunk end was emitted before the next byte: %v", got)
	}
	mustFeed("\n")
	if want := []block{{"data: a\r\r\n", true}}; len(got) != 1 || got[0] != want[0] {
		t.Fatalf("after LF got %v, want %v", got, want)
	}
	mustFeed("data: b\r\r")
	mustFeed("d")
	if len(got) != 2 || got[1] != (block{"data: b\r\r", true}) {
		t.Fatalf("after a non-LF byte got %v, want the held block emitted without LF", got)
	}
	mustFeed("ata: c\r\r")
	n, err := f.End(emit)
	if err != nil || n != 0 {
		t.Fatalf("End = %d, %v; want 0, nil", n, err)
	}
	if len(got) != 3 || got[2] != (block{"data: c\r\r", true}) {
		t.Fatalf("End did not emit the held block as a frame: %v", got)
	}
}

// TestFramerEmitError checks that an emit error stops Feed and is returned.
func TestFramerEmitError(t *testing.T) {
	boom := errors.New("client gone")
	for _, chunks := range [][]string{
		{"data: a\n\ndata: b\n\n"},       // block inside the chunk
		{"data: a\n", "\ndata: b\n\n"},   // block from the buffer
		{"data: a\n\r", "\ndata: b\n\n"}, // held block
		{"data: a\n\r", "data: b\n\n\n"}, // held block, no LF
	} {
		var f Framer
		calls := 0
		emit := func(raw []byte, isFrame bool) error {
			calls++
			return boom
		}
		var err error
		for _, c := range chunks {
			if err = f.Feed([]byte(c), emit); err != nil {
				break
			}
		}
		if !errors.Is(err, boom) {
			t.Errorf("%q: Feed returned %v, want the emit error", chunks, err)
		}
		if calls != 1 {
			t.Errorf("%q: emit called %d times after it failed, want 1", chunks, calls)
		}
	}
}

// TestFramerEndResets checks that End resets the Framer: a second stream is
// framed from scratch, BOM included, and a buffered tail does not leak into it.
func TestFramerEndResets(t *testing.T) {
	var f Framer
	var got []block
	emit := func(raw []byte, isFrame bool) error {
		got = append(got, block{string(raw), isFrame})
		return nil
	}
	if err := f.Feed([]byte(bomS+"data: a\n\ndata: partial"), emit); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.End(emit); n != len("data: partial") {
		t.Fatalf("End = %d, want %d", n, len("data: partial"))
	}
	if err := f.Feed([]byte(bomS+"data: b\n\n"), emit); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.End(emit); n != 0 {
		t.Fatalf("second End = %d, want 0", n)
	}
	want := []block{{bomS + "data: a\n\n", true}, {"data: partial", false}, {bomS + "data: b\n\n", true}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestFramerAliasing checks that a block emitted from the internal buffer is
// not overwritten before emit returns, and that blocks inside a chunk are
// slices of it (no copy).
func TestFramerAliasing(t *testing.T) {
	var f Framer
	chunk := []byte("data: a\n\ndata: b")
	var inChunk bool
	err := f.Feed(chunk, func(raw []byte, isFrame bool) error {
		inChunk = &raw[0] == &chunk[0]
		return nil
	})
	if err != nil || !inChunk {
		t.Fatalf("block wholly inside the chunk was not emitted as a slice of it (err %v)", err)
	}
	var got string
	err = f.Feed([]byte("\n\n"), func(raw []byte, isFrame bool) error {
		got = string(raw)
		return nil
	})
	if err != nil || got != "data: b\n\n" {
		t.Fatalf("spanning block = %q, %v", got, err)
	}
	if !bytes.Equal(chunk, []byte("data: a\n\ndata: b")) {
		t.Fatal("Framer modified the caller's chunk")
	}
}
