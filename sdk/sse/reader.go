package sse

import (
	"bytes"
	"iter"
	"strings"
	"unsafe"
)

// A Reader turns what a streaming plugin receives through OnResponseFrame
// into protocol units: SSE events for an event stream, or the whole body
// for anything else (P19, P22).
//
// The units never depend on how the host chunked the bytes: events are cut
// with a [Framer], and a non-SSE body is handed over only once, at the last
// call. So a parser built on a Reader yields the same result for any
// chunking, also when a host hands a buffered event stream over as one
// frame.

// Handler receives the units of one response.
type Handler interface {
	// Event gets one SSE event that carries data, in wire order: its
	// fields and, in ev.Raw, the block's exact bytes. Its Data and Raw may
	// be views of the borrowed frame (P24), valid only during the call:
	// copy what you keep ([Bytes] reads Data without a copy).
	Event(ev Event)
	// Body gets the whole non-SSE body once, after the last frame, unless
	// it is empty or blank. It is valid only during the call.
	Body(body []byte)
}

type mode uint8

const (
	undecided mode = iota
	modeSSE
	modeBody
)

// Keep one Reader per exchange (in the exchange's typed state); the zero
// value is ready to use.
type Reader struct {
	mode   mode
	framer Framer
	buf    []byte // the non-SSE body, or leading whitespace while undecided
	h      Handler
}

// Feed consumes one OnResponseFrame call. contentType is the response's
// Content-Type header; frame is borrowed (P24): every byte kept is copied.
// When last is true the response is complete and the Reader is spent.
// A frame that is exactly one complete block, as a host that frames the
// stream hands it over (P19), is handed on without being framed again;
// the units are the same either way.
func (r *Reader) Feed(contentType string, frame []byte, last bool, h Handler) {
	r.h = h
	if r.mode == undecided {
		r.decide(contentType, frame)
	}
	switch r.mode {
	case modeSSE:
		if v, ok := r.framer.oneData(frame); ok {
			// One event of one data line, as a host frames a stream
			// (P19): what emit would hand over, without framing again.
			h.Event(Event{Data: unsafe.String(unsafe.SliceData(v), len(v)), HasData: true, Raw: frame})
		} else if isFrame, ok := r.framer.whole(frame); ok {
			_ = r.emit(frame, isFrame) // one block, as a host frames it
		} else {
			_ = r.framer.Feed(frame, r.emit) // emit never fails
		}
		if last {
			r.end()
		}
	case modeBody:
		switch {
		case last && len(r.buf) == 0:
			if len(bytes.TrimSpace(frame)) > 0 { // an empty body holds nothing
				h.Body(frame) // the common case: a JSON body in one frame, no copy
			}
		case last:
			r.buf = append(r.buf, frame...)
			if len(bytes.TrimSpace(r.buf)) > 0 {
				h.Body(r.buf)
			}
		default:
			r.buf = append(r.buf, frame...)
		}
	default: // still undecided: only whitespace so far
		r.buf = append(r.buf, frame...)
		if last && len(bytes.TrimSpace(r.buf)) > 0 {
			h.Body(r.buf)
		}
	}
	if last {
		r.h = nil
	}
}

// Decided reports whether the Reader knows what the body is (an event
// stream or not); until it does, Feed needs the content type. A caller
// may pass "" once it is decided, sparing a header lookup per frame.
func (r *Reader) Decided() bool { return r.mode != undecided }

// decide picks SSE or body from the content type (only text/event-stream
// is a stream) or, without one, from the first non-space byte: a JSON body
// starts with { or [, anything else is taken for a stream.
func (r *Reader) decide(contentType string, frame []byte) {
	ct := strings.ToLower(contentType)
	switch {
	case strings.Contains(ct, "text/event-stream"):
		r.mode = modeSSE
	case ct != "":
		r.mode = modeBody
	default:
		probe := bytes.TrimLeft(frame, " \t\r\n")
		if len(probe) == 0 {
			return
		}
		if probe[0] == '{' || probe[0] == '[' {
			r.mode = modeBody
		} else {
			r.mode = modeSSE
		}
	}
	if r.mode == modeSSE && len(r.buf) > 0 {
		// Leading whitespace held while undecided belongs to the stream.
		_ = r.framer.Feed(r.buf, r.emit)
		r.buf = r.buf[:0]
	}
}

func (r *Reader) emit(raw []byte, isFrame bool) error {
	if isFrame {
		// A view, not a copy: the data is borrowed for the call, like
		// the frame, and this was the only allocation per event.
		r.h.Event(ParseView(raw))
	} else if o, ok := r.h.(OtherHandler); ok {
		o.Other(raw)
	}
	return nil
}

// OtherHandler is an optional Handler extension that also gets the blocks
// of an event stream that are not events (no data line: comments, fields
// only, or text such as an error object a server wrote outside any data
// line), raw, including an unterminated final block. raw is borrowed.
type OtherHandler interface {
	Other(raw []byte)
}

// end flushes the framer. An unterminated final block (the stream ended
// without its blank line) is not an event, as WHATWG says and as the
// runtime does (P19: relayed, not dispatched): a parser sees exactly the
// frames the runtime dispatches, and a stream cut short shows as one that
// never reached its end marker (data: [DONE], message_stop, …).
func (r *Reader) end() {
	_, _ = r.framer.End(r.emit)
}

// Bytes returns s's bytes without copying them, for reading an event's
// Data as JSON (json.Unmarshal, json.Valid and the like take []byte). The
// slice must not be written, and like Data it is valid only during the
// Event call.
func Bytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// Events returns the events of a whole event stream held in body, in
// order: each with its fields and its block's bytes in Raw. Blocks that are
// not events (comments, fields without data) and an unterminated final
// block are skipped, as a WHATWG client skips them. Data and Raw are views
// of body, valid as long as body is and not to be written.
func Events(body []byte) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		var f Framer
		stop := errStop{}
		emit := func(raw []byte, isFrame bool) error {
			if isFrame && !yield(ParseView(raw)) {
				return stop
			}
			return nil
		}
		if f.Feed(body, emit) != nil {
			return
		}
		_, _ = f.End(emit) // the unterminated block is not a frame: never yielded
	}
}

type errStop struct{}

func (errStop) Error() string { return "stopped" }
