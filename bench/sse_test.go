package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	gin "github.com/gin-contrib/sse"
	r3 "github.com/r3labs/sse/v2"
	gosse "github.com/tmaxmax/go-sse"

	"github.com/abkit/abkit/sdk/sse"
)

// chatStream is about size bytes of chat-completion events (the shape LLM
// APIs stream), with a keep-alive comment every 50 events, lines ended by
// eol; it returns the stream and its number of events (data blocks).
func chatStream(size int, eol string) ([]byte, int) {
	words := []string{"hello", " world", ",", " the", " quick", " brown", " fox", " jumps", "\\n", " over"}
	var sb strings.Builder
	events := 0
	for i := 0; sb.Len() < size; i++ {
		if i%50 == 49 {
			sb.WriteString(": keep-alive" + eol + eol)
			continue
		}
		fmt.Fprintf(&sb, `data: {"id":"chatcmpl-%d","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}%s%s`,
			i/100, words[i%len(words)], eol, eol)
		events++
	}
	sb.WriteString("data: [DONE]" + eol + eol)
	return []byte(sb.String()), events + 1
}

// pieces is an io.Reader that returns at most n bytes per Read, as a
// network connection does.
type pieces struct {
	b []byte
	n int
}

func (p *pieces) Read(dst []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	m := copy(dst[:min(len(dst), p.n)], p.b)
	p.b = p.b[m:]
	return m, nil
}

type input struct {
	name   string
	eol    string
	read   int
	stream []byte
	events int
}

func inputs() []input {
	var out []input
	for _, c := range []struct {
		name, eol string
		read      int
	}{{"lf-4k", "\n", 4096}, {"crlf-4k", "\r\n", 4096}, {"lf-7b", "\n", 7}} {
		s, n := chatStream(4<<20, c.eol)
		out = append(out, input{c.name, c.eol, c.read, s, n})
	}
	return out
}

// A parser reads a whole stream and returns the number of events and the
// total length of their data (so that no parser can skip the data).
type parser func(r io.Reader) (events, dataLen int, err error)

// abkitParse is the framer plus field parsing of every frame, as the
// pipeline runtime does it.
func abkitParse(r io.Reader) (int, int, error) {
	var f sse.Framer
	n, dl := 0, 0
	emit := func(raw []byte, isFrame bool) error {
		if isFrame {
			ev := sse.Parse(raw)
			n++
			dl += len(ev.Data)
		}
		return nil
	}
	buf := make([]byte, 4096)
	for {
		m, err := r.Read(buf)
		if m > 0 {
			if ferr := f.Feed(buf[:m], emit); ferr != nil {
				return n, dl, ferr
			}
		}
		if err == io.EOF {
			_, err = f.End(emit)
			return n, dl, err
		}
		if err != nil {
			return n, dl, err
		}
	}
}

// scannerParse is the naive floor: bufio.Scanner lines (LF and CRLF only,
// no lone CR), data lines joined, an event at each blank line.
func scannerParse(r io.Reader) (int, int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n, dl := 0, 0
	var data strings.Builder
	has := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if has {
				n++
				dl += len(data.String())
				data.Reset()
				has = false
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if has {
				data.WriteByte('\n')
			}
			data.Write(v)
			has = true
		}
	}
	return n, dl, sc.Err()
}

func ginParse(r io.Reader) (int, int, error) {
	evs, err := gin.Decode(r)
	dl := 0
	for _, e := range evs {
		dl += len(e.Data.(string))
	}
	return len(evs), dl, err
}

func goSSEParse(r io.Reader) (int, int, error) {
	n, dl := 0, 0
	for ev, err := range gosse.Read(r, nil) {
		if err != nil {
			return n, dl, err
		}
		n++
		dl += len(ev.Data)
	}
	return n, dl, nil
}

// BenchmarkParse is full parsing (framing and fields, each event's data
// as a string) of a 4 MiB chat-completion stream, per peer and input.
func BenchmarkParse(b *testing.B) {
	peers := []struct {
		name string
		p    parser
	}{
		{"abkit", abkitParse},
		{"scanner", scannerParse},
		{"gin-contrib-sse", ginParse},
		{"tmaxmax-go-sse", goSSEParse},
	}
	for _, in := range inputs() {
		_, wantData, _ := scannerParse(bytes.NewReader(bytes.ReplaceAll(in.stream, []byte("\r\n"), []byte("\n"))))
		for _, p := range peers {
			b.Run(in.name+"/"+p.name, func(b *testing.B) {
				// A peer that misreads the input is reported, not timed.
				if n, dl, err := p.p(&pieces{in.stream, in.read}); err != nil || n != in.events || dl != wantData {
					b.Skipf("%s misreads this input: %d events, %d data bytes, error %v; want %d, %d",
						p.name, n, dl, err, in.events, wantData)
				}
				b.SetBytes(int64(len(in.stream)))
				b.ReportAllocs()
				for b.Loop() {
					n, dl, err := p.p(&pieces{in.stream, in.read})
					if err != nil {
						b.Fatal(err)
					}
					if n != in.events || dl != wantData {
						b.Fatalf("%d events, %d data bytes; want %d, %d", n, dl, in.events, wantData)
					}
				}
			})
		}
	}
}

// framer reads a whole stream and returns the number of blocks it cut
// (every block, data or not).
type framer func(r io.Reader) (int, error)

func abkitFrame(r io.Reader) (int, error) {
	var f sse.Framer
	n := 0
	emit := func([]byte, bool) error { n++; return nil }
	buf := make([]byte, 4096)
	for {
		m, err := r.Read(buf)
		if m > 0 {
			f.Feed(buf[:m], emit)
		}
		if err == io.EOF {
			_, err = f.End(emit)
			return n, err
		}
		if err != nil {
			return n, err
		}
	}
}

func r3Frame(r io.Reader) (int, error) {
	rd := r3.NewEventStreamReader(r, 1<<20)
	n := 0
	for {
		_, err := rd.ReadEvent()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// indexByteLines is the floor of a framer on LF: it finds every LF with
// bytes.IndexByte and counts blank lines, carrying only whether the last
// line of a read was empty so far. It knows no CR and copies nothing.
func indexByteLines(r io.Reader) (int, error) {
	buf := make([]byte, 4096)
	n := 0
	lineLen := 0 // bytes of the current line so far
	for {
		m, err := r.Read(buf)
		b := buf[:m]
		for len(b) > 0 {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				lineLen += len(b)
				break
			}
			if lineLen+i == 0 {
				n++
			}
			lineLen = 0
			b = b[i+1:]
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// BenchmarkFrame is framing alone: abkit's Framer, r3labs/sse's
// EventStreamReader (whose field parsing is not exported) and the
// bytes.IndexByte line loop (LF only).
func BenchmarkFrame(b *testing.B) {
	peers := []struct {
		name string
		f    framer
		lf   bool // LF only
	}{
		{"abkit", abkitFrame, false},
		{"r3labs-sse", r3Frame, false},
		{"indexbyte-loop", indexByteLines, true},
	}
	for _, in := range inputs() {
		blocks := in.events + (in.events-1)/49 // events plus keep-alive comments
		for _, p := range peers {
			if p.lf && in.eol != "\n" {
				continue
			}
			b.Run(in.name+"/"+p.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.stream)))
				b.ReportAllocs()
				for b.Loop() {
					n, err := p.f(&pieces{in.stream, in.read})
					if err != nil {
						b.Fatal(err)
					}
					if n != blocks {
						b.Fatalf("%d blocks, want %d", n, blocks)
					}
				}
			})
		}
	}
}

// BenchmarkInterleaved runs every peer once per iteration, one after the
// other on the same input, and reports each one's best pass (MB/s
// metrics) and the ratio of the best passes (x-abkit-vs-PEER: the peer's
// time over abkit's, so above 1 means abkit is faster). On a shared
// machine this is the fair comparison: every peer sees the same spells of
// load, and the best of many passes is the one least disturbed by them.
func BenchmarkInterleaved(b *testing.B) {
	type peer struct {
		name string
		run  func(io.Reader) error
	}
	parse := func(p parser, want, wantData int) func(io.Reader) error {
		return func(r io.Reader) error {
			n, dl, err := p(r)
			if err == nil && (n != want || dl != wantData) {
				err = fmt.Errorf("%d events, %d data bytes; want %d, %d", n, dl, want, wantData)
			}
			return err
		}
	}
	frame := func(f framer, want int) func(io.Reader) error {
		return func(r io.Reader) error {
			n, err := f(r)
			if err == nil && n != want {
				err = fmt.Errorf("%d blocks, want %d", n, want)
			}
			return err
		}
	}
	for _, in := range inputs() {
		_, wantData, _ := scannerParse(bytes.NewReader(bytes.ReplaceAll(in.stream, []byte("\r\n"), []byte("\n"))))
		blocks := in.events + (in.events-1)/49
		parsePeers := []peer{
			{"abkit", parse(abkitParse, in.events, wantData)},
			{"scanner", parse(scannerParse, in.events, wantData)},
			{"tmaxmax-go-sse", parse(goSSEParse, in.events, wantData)},
		}
		if in.eol == "\n" { // gin-contrib/sse v1.1.2 reads a CRLF stream as one event
			parsePeers = append(parsePeers, peer{"gin-contrib-sse", parse(ginParse, in.events, wantData)})
		}
		framePeers := []peer{
			{"abkit", frame(abkitFrame, blocks)},
			{"r3labs-sse", frame(r3Frame, blocks)},
		}
		if in.eol == "\n" {
			framePeers = append(framePeers, peer{"indexbyte-loop", frame(indexByteLines, blocks)})
		}
		for kind, peers := range map[string][]peer{"parse": parsePeers, "frame": framePeers} {
			b.Run(kind+"/"+in.name, func(b *testing.B) {
				best := make([]time.Duration, len(peers))
				for b.Loop() {
					for i, p := range peers {
						t0 := time.Now()
						if err := p.run(&pieces{in.stream, in.read}); err != nil {
							b.Fatalf("%s: %v", p.name, err)
						}
						if d := time.Since(t0); best[i] == 0 || d < best[i] {
							best[i] = d
						}
					}
				}
				mb := float64(len(in.stream)) / 1e6
				for i, p := range peers {
					b.ReportMetric(mb/best[i].Seconds(), p.name+"-MB/s")
					if i > 0 {
						b.ReportMetric(best[i].Seconds()/best[0].Seconds(), "x-abkit-vs-"+p.name)
					}
				}
			})
		}
	}
}
