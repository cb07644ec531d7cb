package sse

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// logHandler writes down every unit a Reader hands over, copied.
type logHandler struct{ log []string }

func (h *logHandler) Event(ev Event) {
	h.log = append(h.log, fmt.Sprintf("event id=%q/%v event=%q data=%q/%v retry=%d/%v comments=%q raw=%q",
		ev.ID, ev.HasID, ev.Event, ev.Data, ev.HasData, ev.Retry, ev.HasRetry, ev.Comments, ev.Raw))
}
func (h *logHandler) Body(body []byte) { h.log = append(h.log, fmt.Sprintf("body %q", body)) }
func (h *logHandler) Other(raw []byte) { h.log = append(h.log, fmt.Sprintf("other %q", raw)) }

// framedLog is what a Reader must hand over for the event stream in: its
// blocks as the Framer cuts it in one chunk, parsed as Reader parses them.
func framedLog(in []byte) []string {
	h := &logHandler{}
	var f Framer
	emit := func(raw []byte, isFrame bool) error {
		if isFrame {
			h.Event(ParseView(raw))
		} else {
			h.Other(raw)
		}
		return nil
	}
	_ = f.Feed(in, emit)
	_, _ = f.End(emit)
	return h.log
}

// readerLog feeds chunks to a fresh Reader of an event stream, then the
// closing call, and returns what it handed over.
func readerLog(chunks [][]byte) []string { return readerLogAs("text/event-stream", chunks) }

// readerLogAs is readerLog with the content type ct.
func readerLogAs(ct string, chunks [][]byte) []string {
	h := &logHandler{}
	var r Reader
	for _, c := range chunks {
		r.Feed(ct, c, false, h)
	}
	r.Feed(ct, nil, true, h)
	return h.log
}

// TestReaderUndecidedWhitespace: without a content type, the blank
// blocks a Reader holds while it cannot tell what the body is are framed
// before the one-block path takes the next frame.
func TestReaderUndecidedWhitespace(t *testing.T) {
	in := "\n\r\n\ndata: a\n\ndata: b\n\n"
	want := framedLog([]byte(in))
	blocks, _ := feedChunks(t, [][]byte{[]byte(in)})
	var perBlock [][]byte
	for _, b := range blocks {
		perBlock = append(perBlock, []byte(b.raw))
	}
	if got := readerLogAs("", perBlock); !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// checkReaderChunkings holds a Reader fed in to what the Framer gives for
// it: one block per call (as a host frames a stream, where the Reader
// skips its own framing), blocks joined in pairs, a random split and one
// byte per call.
func checkReaderChunkings(t *testing.T, in []byte, seed uint64) {
	t.Helper()
	want := framedLog(in)
	blocks, _ := feedChunks(t, [][]byte{in})
	var perBlock, pairs [][]byte
	for i, b := range blocks {
		perBlock = append(perBlock, []byte(b.raw))
		if i%2 == 1 {
			pairs = append(pairs, []byte(blocks[i-1].raw+b.raw))
		}
	}
	if len(blocks)%2 == 1 {
		pairs = append(pairs, []byte(blocks[len(blocks)-1].raw))
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var split [][]byte
	for rest := in; len(rest) > 0; {
		k := rng.IntN(min(len(rest), 64) + 1)
		split = append(split, rest[:k])
		rest = rest[k:]
	}
	for _, tc := range []struct {
		name   string
		chunks [][]byte
	}{{"one block per call", perBlock}, {"two blocks per call", pairs}, {"random split", split}, {"one byte per call", splitEvery(in, 1)}} {
		if got := readerLog(tc.chunks); !slices.Equal(got, want) {
			t.Fatalf("%s %q:\n got %q\nwant %q", tc.name, tc.chunks, got, want)
		}
	}
}

func TestReaderMatchesFramer(t *testing.T) {
	for _, in := range readerSeeds() {
		checkReaderChunkings(t, []byte(in), uint64(len(in)))
	}
	for _, tc := range framerCases() {
		checkReaderChunkings(t, []byte(tc.in), uint64(len(tc.in)))
	}
}

// readerSeeds are streams whose blocks test the one-block path's edges:
// a BOM first, CR line ends, blank lines of their own, comments and
// field-only blocks, data lines with and without a colon, several lines.
func readerSeeds() []string {
	return []string{
		"data: a\n\n",
		"data: a\n\ndata: b\n\n",
		"\xEF\xBB\xBFdata: a\n\ndata: b\n\n",
		"\xEF\xBB\xBF\n\ndata: a\n\n",
		"data: a\n\n\xEF\xBB\xBFdata: b\n\n",
		"data: a\n\n\xEF\xBB\xBF\ndata: b\n\n",
		"data\n\ndata:\n\ndata:x\n\n",
		"\n\ndata: a\n\n\n",
		": ping\n\nid: 3\n\nretry: 10\n\ndata: a\n\n",
		"event: e\nid: 1\ndata: a\ndata: b\n: c\nretry: 5\n\n",
		"data: a\r\n\r\ndata: b\r\rdata: c\n\n",
		"data: a\n\r\ndata: b\n\n",
		"dat: a\n\ndatas: b\n\nxdata: c\n\n",
		"data: a\n\ndata: unterminated\n",
		"data: a\n",
	}
}

func FuzzReader(f *testing.F) {
	for _, in := range readerSeeds() {
		f.Add([]byte(in), uint64(len(in)))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		checkReaderChunkings(t, in, seed)
	})
}

// TestReaderOneBlockAllocs: a Reader fed one event per call allocates
// nothing (the handler here keeps nothing).
func TestReaderOneBlockAllocs(t *testing.T) {
	frame := []byte(`data: {"choices":[{"delta":{"content":"hi"}}]}` + "\n\n")
	var r Reader
	h := nopHandler{}
	r.Feed("text/event-stream", frame, false, h)
	if n := testing.AllocsPerRun(100, func() { r.Feed("", frame, false, h) }); n != 0 {
		t.Errorf("%v allocations per frame, want 0", n)
	}
}

type nopHandler struct{}

func (nopHandler) Event(Event) {}
func (nopHandler) Body([]byte) {}
