package inferenceparser

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// fastChat decodes the common chat-completions stream chunk
//
//	{"id":…,"object":…,"created":…,"model":…,"choices":[{"index":0,"delta":{"role":…,"content":…},"finish_reason":null}]}
//
// into a wire exactly as json.Unmarshal would, without its allocations
// (about 15 per event: the decoder state, the parse stack, the choices
// slice, the delta, the content's own Unmarshal). It accepts only that
// shape: members it does not know, a repeated member, an escape in a key,
// values of another type, tool calls, usage, or anything that is not valid
// JSON make it decline, and the caller decodes with encoding/json, which
// then decides (including what is malformed). So the fast path changes no
// result, only the cost.
//
// Strings it stores are views of the data, valid while the data is: the
// aggregator copies what it keeps (chatChunk clones the id, model and
// finish reason; content goes into builders). Its buffers are reused from
// event to event.
type fastChat struct {
	choices []wireChoice
	msgs    []chatMsg
	finish  []string
}

// decode fills w (zero on entry) from data and reports whether it could.
// When it cannot, w may be partly filled; the caller zeroes it again.
func (f *fastChat) decode(data []byte, w *wire) bool {
	l := lexer{b: data}
	if !l.eat('{') {
		return false
	}
	var seen uint16
	once := func(bit uint16) bool {
		if seen&bit != 0 {
			return false // a repeated member: encoding/json's rules differ by type
		}
		seen |= bit
		return true
	}
	if !l.eat('}') {
		for {
			key, ok := l.key()
			if !ok || !l.eat(':') {
				return false
			}
			switch key {
			case "id":
				ok = once(1 << 0)
				w.ID, ok = l.strInto(ok)
			case "object":
				ok = once(1 << 1)
				w.Object, ok = l.strInto(ok)
			case "model":
				ok = once(1 << 2)
				w.Model, ok = l.strInto(ok)
			case "created":
				ok = once(1<<3) && l.integer()
			case "system_fingerprint", "service_tier", "obfuscation":
				// Not read: any string or null.
				bit := uint16(1 << 4)
				switch key {
				case "service_tier":
					bit = 1 << 5
				case "obfuscation":
					bit = 1 << 6
				}
				ok = once(bit) && (l.null() || l.skipStr())
			case "usage":
				ok = once(1<<7) && l.null() // a usage object: the full decoder
			case "choices":
				ok = once(1<<8) && f.choicesInto(&l, w)
			default:
				return false
			}
			if !ok {
				return false
			}
			if l.eat('}') {
				break
			}
			if !l.eat(',') {
				return false
			}
		}
	}
	l.ws()
	return l.i == len(l.b) // trailing data: not one JSON value
}

// choicesInto reads the choices array.
func (f *fastChat) choicesInto(l *lexer, w *wire) bool {
	if !l.eat('[') {
		return false // null or another type
	}
	f.choices, f.msgs, f.finish = f.choices[:0], f.msgs[:0], f.finish[:0]
	if !l.eat(']') {
		for {
			if !f.choice(l) {
				return false
			}
			if l.eat(']') {
				break
			}
			if !l.eat(',') {
				return false
			}
		}
	}
	// Pointers into msgs and finish are set once both have stopped growing.
	for i := range f.choices {
		c := &f.choices[i]
		if c.Delta != nil {
			c.Delta = &f.msgs[i]
		}
		if c.FinishReason != nil {
			c.FinishReason = &f.finish[i]
		}
	}
	w.Choices = f.choices
	if w.Choices == nil {
		w.Choices = []wireChoice{} // "choices":[] decodes to an empty, non-nil slice
	}
	return true
}

// choice reads one element of choices; a non-nil Delta or FinishReason
// marks that the element has one (choicesInto points them).
func (f *fastChat) choice(l *lexer) bool {
	if !l.eat('{') {
		return false
	}
	f.choices = append(f.choices, wireChoice{})
	f.msgs = append(f.msgs, chatMsg{})
	f.finish = append(f.finish, "")
	i := len(f.choices) - 1
	c, m := &f.choices[i], &f.msgs[i]
	var seen uint8
	if l.eat('}') {
		return true
	}
	for {
		key, ok := l.key()
		if !ok || !l.eat(':') {
			return false
		}
		var bit uint8
		switch key {
		case "index":
			bit = 1 << 0
			c.Index, ok = l.int()
		case "delta":
			bit = 1 << 1
			if !l.null() {
				ok = f.delta(l, m)
				c.Delta = m // a marker: choicesInto points it at its element
			}
		case "finish_reason":
			bit = 1 << 2
			if !l.null() {
				f.finish[i], ok = l.strInto(true)
				c.FinishReason = &f.finish[i]
			}
		case "logprobs":
			bit = 1 << 3
			ok = l.null()         // anything else: the full decoder
			c.Logprobs = jsonNull // as json.RawMessage decodes null; read only
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if l.eat('}') {
			return true
		}
		if !l.eat(',') {
			return false
		}
	}
}

// delta reads a choice's delta object.
func (f *fastChat) delta(l *lexer, m *chatMsg) bool {
	if !l.eat('{') {
		return false
	}
	var seen uint8
	if l.eat('}') {
		return true
	}
	for {
		key, ok := l.key()
		if !ok || !l.eat(':') {
			return false
		}
		var bit uint8
		switch key {
		case "role":
			bit = 1 << 0
			ok = l.null() || l.skipStr() // not read
		case "content":
			bit = 1 << 1
			if !l.null() { // null leaves the content empty, as text does
				var s string
				s, ok = l.strInto(true)
				m.Content = text(s)
			}
		case "refusal":
			bit = 1 << 2
			if !l.null() {
				m.Refusal, ok = l.strInto(true)
			}
		case "reasoning_content":
			bit = 1 << 3
			if !l.null() {
				m.ReasoningContent, ok = l.strInto(true)
			}
		default:
			return false // tool calls and anything else: the full decoder
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if l.eat('}') {
			return true
		}
		if !l.eat(',') {
			return false
		}
	}
}

// jsonNull is what a json.RawMessage holds after decoding null.
var jsonNull = json.RawMessage("null")

// release drops the views of the last event's data, so that nothing the
// host lent stays reachable from the aggregator after the call.
func (f *fastChat) release() {
	clear(f.choices)
	clear(f.msgs)
	clear(f.finish)
}

// lexer reads JSON tokens from b at i.
type lexer struct {
	b []byte
	i int
}

func (l *lexer) ws() {
	for l.i < len(l.b) {
		switch l.b[l.i] {
		case ' ', '\t', '\n', '\r':
			l.i++
		default:
			return
		}
	}
}

// eat skips space and then c, if c is next.
func (l *lexer) eat(c byte) bool {
	l.ws()
	if l.i < len(l.b) && l.b[l.i] == c {
		l.i++
		return true
	}
	return false
}

// null reads the literal null, if it is next.
func (l *lexer) null() bool {
	l.ws()
	if len(l.b)-l.i >= 4 && string(l.b[l.i:l.i+4]) == "null" {
		l.i += 4
		return true
	}
	return false
}

// token returns the next string token, quotes included, and whether its
// contents are plain: printable ASCII without escapes.
func (l *lexer) token() (tok []byte, plain, ok bool) {
	l.ws()
	if l.i >= len(l.b) || l.b[l.i] != '"' {
		return nil, false, false
	}
	plain = true
	for j := l.i + 1; j < len(l.b); j++ {
		switch c := l.b[j]; {
		case c == '"':
			tok, l.i = l.b[l.i:j+1], j+1
			return tok, plain, true
		case c == '\\':
			plain = false
			j++ // the escaped byte; encoding/json checks the escape
		case c < 0x20:
			return nil, false, false // invalid JSON: the full decoder says so
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return nil, false, false
}

// key reads an object key that is plain ASCII; an escaped or non-ASCII
// key is declined (it might match a field only the way encoding/json
// folds case).
func (l *lexer) key() (string, bool) {
	tok, plain, ok := l.token()
	if !ok || !plain {
		return "", false
	}
	return view(tok[1 : len(tok)-1]), true
}

// strInto reads a string value when ok is true: a view of the data when
// plain, else decoded by encoding/json (escapes, and invalid UTF-8 turned
// into U+FFFD), exactly as the full decoder would.
func (l *lexer) strInto(ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	tok, plain, ok := l.token()
	if !ok {
		return "", false
	}
	raw := tok[1 : len(tok)-1]
	if plain || utf8.Valid(raw) && !hasBackslash(raw) {
		return view(raw), true
	}
	var s string
	if json.Unmarshal(tok, &s) != nil {
		return "", false
	}
	return s, true
}

// skipStr reads a string value it does not keep; one with escapes is
// checked by encoding/json.
func (l *lexer) skipStr() bool {
	_, ok := l.strInto(true)
	return ok
}

// int reads an integer that fits in an int, as encoding/json decodes one
// into an int field; a fraction or exponent is declined.
func (l *lexer) int() (int, bool) {
	l.ws()
	start := l.i
	if l.i < len(l.b) && l.b[l.i] == '-' {
		l.i++
	}
	digits := l.i
	for l.i < len(l.b) && l.b[l.i] >= '0' && l.b[l.i] <= '9' {
		l.i++
	}
	if l.i == digits || (l.b[digits] == '0' && l.i-digits > 1) {
		return 0, false // no digits, or a leading zero: not JSON
	}
	if l.i < len(l.b) {
		switch l.b[l.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	n, err := strconv.Atoi(view(l.b[start:l.i]))
	return n, err == nil
}

// integer reads an integer it does not keep (any size).
func (l *lexer) integer() bool {
	l.ws()
	if l.i < len(l.b) && l.b[l.i] == '-' {
		l.i++
	}
	digits := l.i
	for l.i < len(l.b) && l.b[l.i] >= '0' && l.b[l.i] <= '9' {
		l.i++
	}
	if l.i == digits || (l.b[digits] == '0' && l.i-digits > 1) {
		return false
	}
	if l.i < len(l.b) {
		switch l.b[l.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return true
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// view is b as a string without a copy; b must not change while it is used.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
