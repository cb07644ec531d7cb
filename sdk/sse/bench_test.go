package sse

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// chatStream builds a stream of at least size bytes of realistic
// chat-completion chunks, with an occasional keep-alive comment, using the
// line end eol, and reports how many frames it holds.
func chatStream(size int, eol string) ([]byte, int) {
	words := []string{"hello", " world", ",", " the", " quick", " brown", " fox", " jumps", "\\n", " over"}
	var sb strings.Builder
	frames := 0
	for i := 0; sb.Len() < size; i++ {
		if i%50 == 49 {
			sb.WriteString(": keep-alive" + eol + eol)
			continue
		}
		fmt.Fprintf(&sb, `data: {"id":"chatcmpl-%d","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}%s%s`,
			i/100, words[i%len(words)], eol, eol)
		frames++
	}
	sb.WriteString("data: [DONE]" + eol + eol)
	return []byte(sb.String()), frames + 1
}

// feedAll feeds in to f in chunks of size chunk, then ends the stream, adding
// the number of frames emitted to *count.
func feedAll(f *Framer, in []byte, chunk int, count *int) error {
	emit := func(raw []byte, isFrame bool) error {
		if isFrame {
			*count++
		}
		return nil
	}
	for len(in) > 0 {
		c := in[:min(chunk, len(in))]
		in = in[len(c):]
		if err := f.Feed(c, emit); err != nil {
			return err
		}
	}
	_, err := f.End(emit)
	return err
}

// BenchmarkFramer10MB measures P19 framing throughput on a 10 MiB stream of
// chat-completion events fed in 4 KiB chunks.
func BenchmarkFramer10MB(b *testing.B) {
	in, frames := chatStream(10<<20, "\n")
	var f Framer
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := feedAll(&f, in, 4096, &n); err != nil {
			b.Fatal(err)
		}
		if n != frames {
			b.Fatalf("framed %d frames, want %d", n, frames)
		}
	}
}

// BenchmarkFramerPerFrame reports the cost per frame (P19): one op is one
// frame, fed from a cyclic 1 MiB stream in 4 KiB chunks, so allocs/op is
// allocations per frame in steady state.
func BenchmarkFramerPerFrame(b *testing.B) {
	for _, eol := range []string{"\n", "\r\n"} {
		b.Run(fmt.Sprintf("eol=%q", eol), func(b *testing.B) {
			in, _ := chatStream(1<<20, eol)
			var f Framer
			frames := 0
			emit := func(raw []byte, isFrame bool) error {
				if isFrame {
					frames++
				}
				return nil
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			off := 0
			for frames < b.N {
				c := in[off:min(off+4096, len(in))]
				if err := f.Feed(c, emit); err != nil {
					b.Fatal(err)
				}
				if off += len(c); off == len(in) {
					off = 0 // the stream ends on a block boundary, so it can wrap around
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(frames), "ns/frame")
		})
	}
}

// TestFramerZeroAllocsPerFrame checks the P19 steady-state target: once the
// reusable buffer has grown, framing allocates nothing, for LF, CRLF and CR
// streams and chunk sizes that split blocks (and CRLFs) across chunks.
func TestFramerZeroAllocsPerFrame(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		for _, chunk := range []int{4096, 1000, 7} {
			in, frames := chatStream(64<<10, eol)
			var f Framer
			n := 0
			if err := feedAll(&f, in, chunk, &n); err != nil { // warm up the buffer
				t.Fatal(err)
			}
			if n != frames {
				t.Fatalf("eol %q chunk %d: framed %d frames, want %d", eol, chunk, n, frames)
			}
			allocs := testing.AllocsPerRun(5, func() {
				if err := feedAll(&f, in, chunk, &n); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("eol %q chunk %d: %.0f allocations per stream of %d frames (%.4f per frame), want 0",
					eol, chunk, allocs, frames, allocs/float64(frames))
			}
		}
	}
}
