// Package sse cuts a server-sent-events byte stream into blocks and parses
// them, following the WHATWG HTML "event stream" interpretation rules. It is
// the framer abkit's hosts use to implement rule [P19] (the host cuts a
// streamed body into complete protocol messages and delivers each as a
// frame), and the one a plugin uses to read what it is given.
//
// # For a plugin
//
// A streaming plugin keeps a [Reader] per exchange and feeds it each
// OnResponseFrame call; its [Handler] gets every event with its parsed
// fields (event, id, retry, the data lines joined) and its raw block, or,
// for a response that is not an event stream, the whole body once. Results
// never depend on how the host chunked the bytes. [Parser] is the scaffold
// of a streaming parser built on a Reader, with its per-exchange state kept
// on the exchange. [Events] walks a whole stream held in memory.
//
// # Blocks and frames
//
// A Framer splits the stream into lines ended by LF, CR or CRLF, and into
// blocks: the lines up to and including a blank line. Every blank line ends
// one block, so a stray blank line forms a block of its own. A block that has
// at least one data line (field name exactly "data", with or without a
// colon) is a frame: it is what a WHATWG client dispatches as an event, even
// when the data is empty ("data\n\n"). Comment-only and field-only blocks
// (": ping\n\n", "id: 3\n\n", "retry: 10\n\n") are emitted too, as non-frames,
// so their bytes still reach the client. Concatenating every emitted block
// gives back the input exactly, and the blocks, their bytes and their frame
// flag never depend on how the stream was chunked.
//
// # Decisions
//
// CR hold: when the blank line that ends a block is a lone CR that is the
// last byte of a chunk, the Framer holds the block until the next byte (or
// End) shows whether an LF follows, so that a CRLF split across chunks stays
// part of that block's raw bytes. The cost is that a stream using bare CR
// line ends has each frame delayed until the next byte arrives. A CR ending a
// non-blank line at a chunk end is not held back (the block is incomplete
// anyway); an LF at the start of the next chunk is simply part of that line
// end.
//
// BOM: a UTF-8 byte order mark (EF BB BF) at the very start of the stream,
// possibly split across chunks, is ignored for parsing, as WHATWG decoding
// does, but its bytes stay at the start of the first block's raw bytes so
// they reach the client. A BOM anywhere else is ordinary content.
//
// End of stream: a trailing block with no terminating blank line is not an
// event (WHATWG discards it); End emits its bytes as a non-frame and reports
// its length so the caller can warn about it.
//
// [P19]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package sse

import (
	"bytes"
	"strconv"
	"strings"
	"unsafe"
)

// bom is the UTF-8 byte order mark.
var bom = []byte{0xEF, 0xBB, 0xBF}

// Framer cuts an SSE byte stream, arriving in chunks, into blocks. The zero
// value is ready to use. A Framer is not safe for concurrent use.
//
// Complete blocks that lie wholly inside a chunk are emitted as slices of
// that chunk; only a block that spans chunks is copied, into a buffer the
// Framer reuses, so framing does not allocate in steady state.
type Framer struct {
	buf       []byte // bytes of the current, incomplete block (or a held block)
	lineStart int    // offset in buf where its incomplete line starts; len(buf) if none
	data      bool   // the block in buf has a complete data line
	cr        bool   // the last byte fed was a CR ending a line: an LF next belongs to it
	held      bool   // buf is a complete block whose final line end is that CR
	begun     bool   // the stream's first line is complete (the BOM is decided)
}

// Feed consumes chunk and calls emit, in stream order, for every complete
// block: raw is the block's exact bytes including its line ends and the
// terminating blank line; isFrame is true when the block contains at least
// one data line (a dispatched event). Comment-only and field-only blocks are
// emitted with isFrame=false (their bytes still go to the client). raw is
// valid only during emit (it may alias chunk or the Framer's buffer).
//
// If emit returns an error, Feed stops and returns it; the bytes of chunk
// after the failed block are not consumed and the caller should abandon the
// stream (End still resets the Framer).
func (f *Framer) Feed(chunk []byte, emit func(raw []byte, isFrame bool) error) error {
	n := len(chunk)
	if n == 0 {
		return nil
	}
	if !f.cr && n <= smallChunk && !hasLineEnd(chunk) {
		// A small read inside a line (a slow or byte-wise upstream): no
		// line completes, so the bytes only join the block. lineStart
		// already points where the line in progress starts, or, if none
		// is, at len(buf), where the chunk starts one.
		f.buf = append(f.buf, chunk...)
		return nil
	}
	p := 0 // start of the next line in chunk
	if f.cr {
		// The previous chunk ended with a CR line end; an LF here completes it.
		f.cr = false
		if chunk[0] == '\n' {
			f.buf = append(f.buf, '\n')
			p = 1
		}
		if f.held {
			if err := f.flushHeld(emit); err != nil {
				return err
			}
		} else {
			f.lineStart = len(f.buf)
		}
	}

	s := scanner{b: chunk, lf: -1, cr: -1}
	data := f.data
	f.data = false
	bs := p // start of the current block's bytes in chunk that are not yet in buf
	for {
		e, t := s.next(p)
		if t == 0 {
			break // no complete line left in chunk
		}
		q := e + t
		var line []byte
		if f.lineStart < len(f.buf) {
			// The line began in an earlier chunk: join it in buf to look at it.
			f.buf = append(f.buf, chunk[bs:q]...)
			line = f.buf[f.lineStart : len(f.buf)-t]
			f.lineStart = len(f.buf)
			bs = q
		} else {
			line = chunk[p:e]
		}
		p = q
		if !f.begun {
			f.begun = true
			line = bytes.TrimPrefix(line, bom)
		}
		crAtEnd := q == n && t == 1 && chunk[e] == '\r'
		if len(line) > 0 {
			if !data && isData(line) {
				data = true
			}
			if q == n || chunk[q] != '\n' {
				// A CR at the chunk end may be followed by an LF in the
				// next chunk.
				f.cr = crAtEnd
				continue
			}
			// The common "...\n\n": the next line is blank, ended by the
			// LF at q. Taking it here saves a search per block.
			p = q + 1
			q = p
			crAtEnd = false
		}

		// A blank line: the block ends at q.
		if crAtEnd {
			// Hold the block until we know whether an LF follows (see package doc).
			f.buf = append(f.buf, chunk[bs:q]...)
			f.lineStart = len(f.buf)
			f.data = data
			f.cr = true
			f.held = true
			return nil
		}
		var raw []byte
		if len(f.buf) > 0 {
			f.buf = append(f.buf, chunk[bs:q]...)
			raw = f.buf
			f.buf = f.buf[:0] // raw keeps its length; the array is reused only after emit
			f.lineStart = 0
		} else {
			raw = chunk[bs:q]
		}
		isFrame := data
		data = false
		bs = q
		if err := emit(raw, isFrame); err != nil {
			return err
		}
	}

	// Keep the incomplete tail block for the next chunk.
	if bs < n {
		if f.lineStart == len(f.buf) {
			f.lineStart += p - bs // the incomplete line starts at p
		}
		f.buf = append(f.buf, chunk[bs:]...)
	}
	f.data = data
	return nil
}

// End finishes the stream: it resolves a held trailing CR, emits any
// complete block still held, and emits an unterminated trailing block (no
// blank line yet) with isFrame=false; it returns that block's byte count (0
// if none) so the caller can warn "unterminated final event (N bytes)".
// After End the Framer is reset, ready for a new stream.
func (f *Framer) End(emit func(raw []byte, isFrame bool) error) (unterminated int, err error) {
	raw, held, isFrame := f.buf, f.held, f.data
	*f = Framer{buf: f.buf[:0]}
	switch {
	case len(raw) == 0:
		return 0, nil
	case held:
		return 0, emit(raw, isFrame)
	default:
		return len(raw), emit(raw, false)
	}
}

// Pending is how many bytes of an incomplete block the Framer holds: a
// caller bounds it, since a block that never ends would grow without
// limit.
func (f *Framer) Pending() int { return len(f.buf) }

// Reset drops what the Framer holds, its buffer too (it may be large),
// ready for a new stream.
func (f *Framer) Reset() { *f = Framer{} }

// flushHeld emits the complete block held in buf and empties buf.
func (f *Framer) flushHeld(emit func(raw []byte, isFrame bool) error) error {
	raw, isFrame := f.buf, f.data
	f.buf = f.buf[:0]
	f.lineStart = 0
	f.data = false
	f.held = false
	return emit(raw, isFrame)
}

// oneData is whole for the commonest block, one data line and the blank
// line ("data: …\n\n"): it reports whether chunk is that, and returns the
// line's value as ParseView would (singleData), a view of chunk, so that
// the block is searched once, not by whole and then by ParseView.
func (f *Framer) oneData(chunk []byte) ([]byte, bool) {
	n := len(chunk)
	if len(f.buf) != 0 || f.cr || n < 2 || chunk[n-1] != '\n' || chunk[n-2] != '\n' {
		return nil, false
	}
	// Ending in LF LF, singleData takes only a data line with no CR and
	// no other line, and no BOM (isData).
	v, ok := singleData(chunk)
	if ok {
		f.begun = true
	}
	return v, ok
}

// whole reports whether chunk is exactly one complete block that f,
// holding nothing, would emit whole as one call of Feed's emit, and
// whether that block is a frame. When it does, f is left as Feed would
// leave it (the stream begun), so the caller may emit chunk itself and
// skip the Framer: a plugin fed by a host that frames the stream (P19)
// gets one block per call, and framing it again was a measurable share of
// the plugin's work per frame. Blocks with a CR, a BOM at the stream's
// start or a blank line before the end take Feed's way.
func (f *Framer) whole(chunk []byte) (isFrame, ok bool) {
	n := len(chunk)
	if len(f.buf) != 0 || f.cr || n < 2 || chunk[n-1] != '\n' || chunk[n-2] != '\n' {
		return false, false
	}
	if !f.begun && bytes.HasPrefix(chunk, bom) {
		return false, false
	}
	if bytes.IndexByte(chunk, '\r') >= 0 {
		return false, false
	}
	for i := 0; ; {
		j := i + bytes.IndexByte(chunk[i:], '\n') // found: chunk ends with LF
		if j == i {
			// The first blank line: it must be the last byte.
			if j != n-1 {
				return false, false
			}
			f.begun = true
			return isFrame, true
		}
		if !isFrame && isData(chunk[i:j]) {
			isFrame = true
		}
		i = j + 1
	}
}

// smallChunk is the largest chunk Feed checks byte by byte for a line end
// before doing anything else: below it, a loop beats two IndexByte calls.
const smallChunk = 16

// hasLineEnd reports whether b holds a CR or an LF.
func hasLineEnd(b []byte) bool {
	for _, c := range b {
		if c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}

// isData reports whether line (without its line end) has the field name
// "data": exactly "data", or "data" followed by a colon.
func isData(line []byte) bool {
	return len(line) >= 4 && line[0] == 'd' && line[1] == 'a' && line[2] == 't' && line[3] == 'a' &&
		(len(line) == 4 || line[4] == ':')
}

// scanner finds line ends in b. It caches the positions of the next LF and
// the next CR so that each byte is searched at most once per kind, keeping
// CR-only and LF-only streams linear.
type scanner struct {
	b      []byte
	lf, cr int // index of the next LF / CR found so far; len(b) if none; -1 before searching
}

// next returns the line end of the line that starts at i: e is the index of
// its terminator and t the terminator's length (1 for LF or CR, 2 for CRLF).
// t is 0 if b has no line end at or after i. A CR that is the last byte of b
// is returned with t=1; the caller decides what a following LF means.
func (s *scanner) next(i int) (e, t int) {
	if s.lf < i {
		if j := bytes.IndexByte(s.b[i:], '\n'); j >= 0 {
			s.lf = i + j
		} else {
			s.lf = len(s.b)
		}
	}
	if s.cr < i {
		if j := bytes.IndexByte(s.b[i:], '\r'); j >= 0 {
			s.cr = i + j
		} else {
			s.cr = len(s.b)
		}
	}
	if s.lf < s.cr {
		return s.lf, 1
	}
	if s.cr == len(s.b) {
		return 0, 0
	}
	if s.cr+1 < len(s.b) && s.b[s.cr+1] == '\n' {
		return s.cr, 2
	}
	return s.cr, 1
}

// Event is a parsed frame.
type Event struct {
	// ID is the value of the last valid id field; HasID tells whether there
	// was one (an empty id is valid: it resets the last event ID).
	ID    string
	HasID bool
	// Event is the value of the last event field; empty means the client's
	// default type "message".
	Event string
	// Data is the data lines' values joined with "\n". HasData tells whether
	// the block had a data line at all, i.e. whether it is a dispatched event
	// (a "data" line with an empty value gives HasData with Data == "").
	Data    string
	HasData bool
	// Retry is the value of the last valid retry field (ASCII digits only,
	// fitting in an int); HasRetry tells whether there was one.
	Retry    int
	HasRetry bool
	// Comments holds the text of each comment line, after the colon, with
	// one leading space removed, in order.
	Comments []string
	// Raw is the block's exact bytes, line ends and the blank line
	// included, as they reach the client. ParseView, [Reader] and [Events]
	// set it (a view of their input); Parse leaves it nil, since its caller
	// holds the bytes and the Event it returns is meant to be kept.
	Raw []byte
}

// Parse parses one block's raw bytes per WHATWG: lines end with LF, CR or
// CRLF; a line starting with a colon is a comment; otherwise field and value
// are split at the first colon and one leading space of the value is
// removed, and a line without a colon is a field with an empty value; data
// values are joined with "\n"; unknown fields are ignored; an id containing
// NUL is ignored; retry counts only if it is all ASCII digits.
//
// Parse reads up to the first blank line (the end of the block) and treats a
// final line without line end as complete. A leading UTF-8 BOM is skipped,
// because the stream's BOM is the first bytes of the first block's raw
// bytes. If that BOM is a whole line and more lines follow, raw cannot be the
// stream's first block (the Framer would have ended the block at that blank
// line), so the BOM was content of a later block: the line is ignored as an
// unknown field and parsing goes on. Values keep their bytes as they are;
// invalid UTF-8 is not replaced.
//
// Parse allocates only the strings it returns: an event of one data line
// (the common case) costs one allocation, its Data.
func Parse(raw []byte) Event {
	var ev Event
	bomLine := bytes.HasPrefix(raw, bom)
	raw = bytes.TrimPrefix(raw, bom)
	if !bomLine {
		if v, ok := singleData(raw); ok {
			ev.Data, ev.HasData = string(v), true
			return ev
		}
	}
	// first is the first data value, kept as a slice of raw; a second data
	// line starts joined, so one data line costs no buffer.
	var first []byte
	var joined strings.Builder
	multi := false
	sc := scanner{b: raw, lf: -1, cr: -1}
	for i, firstLine := 0, true; i < len(raw); firstLine = false {
		var line []byte
		switch e, t := sc.next(i); t {
		case 0:
			line, i = raw[i:], len(raw)
		default:
			line, i = raw[i:e], e+t
		}
		if len(line) == 0 {
			if firstLine && bomLine && i < len(raw) {
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
			switch {
			case !ev.HasData:
				first, ev.HasData = value, true
			case !multi:
				multi = true
				joined.Grow(len(first) + 1 + len(raw) - i + len(value))
				joined.Write(first)
				fallthrough
			default:
				joined.WriteByte('\n')
				joined.Write(value)
			}
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
	if multi {
		ev.Data = joined.String()
	} else if len(first) > 0 {
		ev.Data = string(first)
	}
	return ev
}

// ParseView is [Parse] without the copy in the common case, and with Raw
// set to raw: for a block of
// one data line, Data is a view of raw's bytes, not a copy, so it is valid
// only while raw is and must be copied to be kept. Other blocks are parsed
// by Parse. It is for a caller that reads each event during one call and
// keeps nothing of it (a streaming parser fed borrowed frames, P24), where
// the copy would be the only allocation per event.
func ParseView(raw []byte) Event {
	if !bytes.HasPrefix(raw, bom) {
		if v, ok := singleData(raw); ok {
			return Event{Data: unsafe.String(unsafe.SliceData(v), len(v)), HasData: true, Raw: raw}
		}
	}
	ev := Parse(raw)
	ev.Raw = raw
	return ev
}

// singleData reports whether raw is one "data" line and, at most, the
// blank line that ends the block, and returns that line's value. Its line
// end is found with IndexByte for LF alone; a CR anywhere sends raw to the
// general path unless it is the CRLF or CRCR (or CR at the end) that ends
// the line or the block.
func singleData(raw []byte) ([]byte, bool) {
	if !isData(raw) {
		return nil, false
	}
	e := bytes.IndexByte(raw, '\n')
	if e < 0 {
		e = len(raw)
	}
	line, rest := raw[:e], raw[min(e+1, len(raw)):]
	if j := bytes.IndexByte(line, '\r'); j >= 0 {
		// CR line ends: accept "…\r\n\r\n", "…\r\r" and "…\r" exactly.
		switch {
		case j == len(line)-1 && e < len(raw) && (len(rest) == 0 || string(rest) == "\r\n"):
		case string(line[j:]) == "\r\r" || string(line[j:]) == "\r":
			if e < len(raw) {
				return nil, false // an LF after CR CR is a blank line of the next block
			}
		default:
			return nil, false
		}
		line = line[:j]
	} else if len(rest) > 0 && string(rest) != "\n" {
		return nil, false
	}
	v := line[4:]
	if len(v) > 0 { // "data:" followed by the value
		v = trimSpace(v[1:])
	}
	return v, true
}

// trimSpace removes one leading U+0020 SPACE, as WHATWG does for values.
func trimSpace(b []byte) []byte {
	if len(b) > 0 && b[0] == ' ' {
		return b[1:]
	}
	return b
}

// parseRetry accepts a non-empty run of ASCII digits that fits in an int.
func parseRetry(v []byte) (int, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	r, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, false // out of range
	}
	return r, true
}
