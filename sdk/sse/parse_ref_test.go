package sse

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/abkit/abkit/internal/testbin"
	"github.com/google/go-cmp/cmp"
)

// parseIndexAny is Parse as it was before the IndexByte scanner and the
// single-data fast path: the reference the new Parse must agree with, and
// the "before" side of BenchmarkParseStream.
func parseIndexAny(raw []byte) Event {
	var ev Event
	bomLine := bytes.HasPrefix(raw, bom)
	raw = bytes.TrimPrefix(raw, bom)
	var data []byte
	for first := true; len(raw) > 0; first = false {
		var line []byte
		i := bytes.IndexAny(raw, "\r\n")
		switch {
		case i < 0:
			line, raw = raw, nil
		case raw[i] == '\r' && i+1 < len(raw) && raw[i+1] == '\n':
			line, raw = raw[:i], raw[i+2:]
		default:
			line, raw = raw[:i], raw[i+1:]
		}
		if len(line) == 0 {
			if first && bomLine && len(raw) > 0 {
				continue // a BOM line of a later block: content, not a blank line (see above)
			}
			break // the blank line that ends the block
		}
		if line[0] == ':' {
			ev.Comments = append(ev.Comments, string(trimSpace(line[1:])))
			continue
		}
		field, value := line, []byte(nil)
		if c := bytes.IndexByte(line, ':'); c >= 0 {
			field, value = line[:c], trimSpace(line[c+1:])
		}
		switch string(field) {
		case "event":
			ev.Event = string(value)
		case "data":
			data = append(data, value...)
			data = append(data, '\n')
			ev.HasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID, ev.HasID = string(value), true
			}
		case "retry":
			if r, ok := parseRetry(value); ok {
				ev.Retry, ev.HasRetry = r, true
			}
		}
	}
	if len(data) > 0 {
		ev.Data = string(data[:len(data)-1]) // drop the LF after the last data line
	}
	return ev
}

// TestParseMatchesReference compares Parse with the previous parser on
// every block of up to four lines drawn from pieces that exercise the
// fast path's edges: CR, LF and CRLF line ends, data with and without a
// colon or space, comments, BOMs and other fields.
func TestParseMatchesReference(t *testing.T) {
	pieces := []string{"data: x", "data", "data:", "data:  y", "id: 1", "event: e", ": c", "retry: 5", "\ufeff", "datax: z", "\r", "\n", "\r\n", ""}
	n := 0
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		raw := []byte(prefix)
		if d := cmp.Diff(parseIndexAny(raw), Parse(raw)); d != "" {
			t.Fatalf("Parse(%q) differs from the previous parser (-old +new):\n%s", raw, d)
		}
		n++
		if depth == 4 {
			return
		}
		for _, p := range pieces {
			gen(prefix+p, depth+1)
		}
	}
	gen("", 0)
	if n < 10000 {
		t.Fatalf("checked only %d blocks", n)
	}
}

// FuzzParse checks Parse against the previous parser on arbitrary blocks.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "data: x\r\n\r\n", "data: x\r\r", "data\r", "\ufeffdata: a\n\n", "data: a\ndata: b\n\n", ": c\nid: 1\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if d := cmp.Diff(parseIndexAny(raw), Parse(raw)); d != "" {
			t.Fatalf("Parse(%q) differs from the previous parser (-old +new):\n%s", raw, d)
		}
	})
}

// TestParseAllocs pins Parse's allocations to the strings it returns.
func TestParseAllocs(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want float64
	}{
		{"data: {\"a\":1}\n\n", 1},
		{"data: {\"a\":1}\r\n\r\n", 1},
		{"data: {\"a\":1}\r\r", 1},
		{"data: a\ndata: b\n\n", 1},
		{"event: delta\ndata: a\n\n", 1},          // "a": one-byte strings do not allocate
		{"id: 71\nevent: delta\ndata: ab\n\n", 3}, // three strings
	} {
		if got := testing.AllocsPerRun(100, func() { Parse([]byte(tc.raw)) }); got != tc.want {
			t.Errorf("Parse(%q): %v allocations, want %v", tc.raw, got, tc.want)
		}
	}
}

// BenchmarkParseStream is full SSE parsing, framing and field parsing, of
// a 10 MiB chat-completion stream, with the previous parser and with Parse
// in the same run, on LF and CRLF line ends in 4 KiB reads and on 7-byte
// reads.
func BenchmarkParseStream(b *testing.B) {
	for _, tc := range []struct {
		name  string
		eol   string
		chunk int
	}{{"LF", "\n", 4096}, {"CRLF", "\r\n", 4096}, {"LF-7B-reads", "\n", 7}} {
		in, frames := chatStream(10<<20, tc.eol)
		for _, p := range []struct {
			name  string
			parse func([]byte) Event
		}{{"before", parseIndexAny}, {"after", Parse}} {
			b.Run(tc.name+"/"+p.name, func(b *testing.B) {
				var f Framer
				var bytesOut int
				emit := func(raw []byte, isFrame bool) error {
					if isFrame {
						bytesOut += len(p.parse(raw).Data)
					}
					return nil
				}
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					for rest := in; len(rest) > 0; {
						c := rest[:min(tc.chunk, len(rest))]
						rest = rest[len(c):]
						if err := f.Feed(c, emit); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := f.End(emit); err != nil {
						b.Fatal(err)
					}
				}
				if bytesOut == 0 {
					b.Fatal("no data parsed")
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(frames), "ns/event")
			})
		}
	}
}

// Real captures written by other tools parse as the previous parser
// parsed them, frame by frame. The captures live beside the checkout and
// are never copied into the repository.
func TestExternalCapturesMatchReference(t *testing.T) {
	corpus := testbin.ExternalCorpus(context.Background())
	if corpus == "" {
		t.Skipf("no external corpus on this machine (set %s): skipping", testbin.CorpusEnv)
	}
	paths, _ := filepath.Glob(filepath.Join(corpus, "captures", "*.sse"))
	if len(paths) == 0 {
		t.Fatalf("no SSE capture in %s", corpus)
	}
	frames := 0
	for _, p := range paths {
		in, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f Framer
		check := func(raw []byte, isFrame bool) error {
			if d := cmp.Diff(parseIndexAny(raw), Parse(raw)); d != "" {
				t.Errorf("%s: block %q parses differently from the previous parser (-old +new):\n%s", filepath.Base(p), raw, d)
			}
			if isFrame {
				frames++
			}
			return nil
		}
		if err := f.Feed(in, check); err != nil {
			t.Fatal(err)
		}
		if _, err := f.End(check); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d captures, %d frames", len(paths), frames)
}

// BenchmarkParseEvent is field parsing alone, one chat-completion event
// per op, with the previous parser and with Parse.
func BenchmarkParseEvent(b *testing.B) {
	const data = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" fox"}}]}`
	for _, tc := range []struct{ name, raw string }{
		{"LF", data + "\n\n"},
		{"CRLF", data + "\r\n\r\n"},
		{"event+id+2data", "event: delta\nid: 42\n" + data + "\n" + data + "\n\n"},
	} {
		raw := []byte(tc.raw)
		for _, p := range []struct {
			name  string
			parse func([]byte) Event
		}{{"before", parseIndexAny}, {"after", Parse}} {
			b.Run(tc.name+"/"+p.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if !p.parse(raw).HasData {
						b.Fatal("no data")
					}
				}
			})
		}
	}
}

// TestParseView checks that ParseView returns what Parse does, and that it
// does not copy a one-data-line event's data (it allocates nothing).
func TestParseView(t *testing.T) {
	for _, raw := range []string{
		"data: {\"a\":1}\n\n", "data: {\"a\":1}\r\n\r\n", "data:\n\n", "data: a\ndata: b\n\n",
		"\xEF\xBB\xBFdata: x\n\n", "event: delta\ndata: ab\n\n", ": c\n\n", "id: 7\n\n",
	} {
		got, want := ParseView([]byte(raw)), Parse([]byte(raw))
		if string(got.Raw) != raw {
			t.Errorf("ParseView(%q).Raw = %q", raw, got.Raw)
		}
		got.Raw = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseView(%q) = %#v, want %#v", raw, got, want)
		}
	}
	b := []byte("data: {\"a\":1}\n\n")
	if n := testing.AllocsPerRun(100, func() { ParseView(b) }); n != 0 {
		t.Errorf("ParseView of one data line: %v allocations, want 0", n)
	}
}
