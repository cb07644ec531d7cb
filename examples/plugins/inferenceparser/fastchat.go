package inferenceparser

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
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
	ok := l.members(func(key string) (uint16, bool) {
		switch key {
		case "id":
			s, ok := l.strInto(true)
			w.ID = s
			return 1 << 0, ok
		case "object":
			s, ok := l.strInto(true)
			w.Object = s
			return 1 << 1, ok
		case "model":
			s, ok := l.strInto(true)
			w.Model = s
			return 1 << 2, ok
		case "created":
			return 1 << 3, l.integer()
		case "system_fingerprint": // not read: any string or null
			return 1 << 4, l.null() || l.skipStr()
		case "service_tier":
			return 1 << 5, l.null() || l.skipStr()
		case "obfuscation":
			return 1 << 6, l.null() || l.skipStr()
		case "usage":
			return 1 << 7, l.null() // a usage object: the full decoder
		case "choices":
			return 1 << 8, f.choicesInto(&l, w)
		}
		return 0, false
	})
	if !ok {
		return false
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
	f.choices = append(f.choices, wireChoice{})
	f.msgs = append(f.msgs, chatMsg{})
	f.finish = append(f.finish, "")
	i := len(f.choices) - 1
	c, m := &f.choices[i], &f.msgs[i]
	return l.members(func(key string) (uint16, bool) {
		switch key {
		case "index":
			n, ok := l.int()
			c.Index = n
			return 1 << 0, ok
		case "delta":
			if l.null() {
				return 1 << 1, true
			}
			c.Delta = m // a marker: choicesInto points it at its element
			return 1 << 1, f.delta(l, m)
		case "finish_reason":
			if l.null() {
				return 1 << 2, true
			}
			s, ok := l.strInto(true)
			f.finish[i], c.FinishReason = s, &f.finish[i]
			return 1 << 2, ok
		case "logprobs":
			c.Logprobs = jsonNull   // as json.RawMessage decodes null; read only
			return 1 << 3, l.null() // anything else: the full decoder
		}
		return 0, false
	})
}

// delta reads a choice's delta object.
func (f *fastChat) delta(l *lexer, m *chatMsg) bool {
	return l.members(func(key string) (uint16, bool) {
		switch key {
		case "role":
			return 1 << 0, l.null() || l.skipStr() // not read
		case "content":
			return 1 << 1, l.nullOrStr(&m.Content.Text) // null leaves the content empty, as text does
		case "refusal":
			return 1 << 2, l.nullOrStr(&m.Refusal)
		case "reasoning_content":
			return 1 << 3, l.nullOrStr(&m.ReasoningContent)
		case "reasoning": // OpenRouter, Groq, vLLM
			return 1 << 4, l.nullOrStr(&m.Reasoning)
		}
		return 0, false // tool calls and anything else: the full decoder
	})
}

// nullOrStr reads null (dst untouched, as encoding/json leaves a string
// field) or a string into dst.
func (l *lexer) nullOrStr(dst *string) bool {
	if l.null() {
		return true
	}
	s, ok := l.strInto(true)
	*dst = s
	return ok
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

// members reads a JSON object: for each member, member is called with the
// key and the lexer at the value, reads the value and returns the key's
// bit and whether it could. An unknown key (bit 0), a value member cannot
// read, or a key seen twice (encoding/json's rules for a repeated member
// differ by type) declines: the caller falls back to encoding/json.
func (l *lexer) members(member func(key string) (bit uint16, ok bool)) bool {
	if !l.eat('{') {
		return false
	}
	if l.eat('}') {
		return true
	}
	var seen uint16
	for {
		key, ok := l.key()
		if !ok || !l.eat(':') {
			return false
		}
		bit, ok := member(key)
		if !ok || bit == 0 || seen&bit != 0 {
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

func (l *lexer) ws() {
	if l.i < len(l.b) && l.b[l.i] > ' ' {
		return // compact JSON, the common case: no loop
	}
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
	for j := l.i + 1; ; j++ {
		j = skipPlain(l.b, j)
		if j >= len(l.b) {
			return nil, false, false
		}
		switch c := l.b[j]; {
		case c == '"':
			tok, l.i = l.b[l.i:j+1], j+1
			return tok, plain, true
		case c == '\\':
			plain = false
			j++ // the escaped byte; encoding/json checks the escape
		case c < 0x20:
			return nil, false, false // invalid JSON: the full decoder says so
		default: // not ASCII
			plain = false
		}
	}
}

// lsb and msb are the lowest and the highest bit of each byte of a word.
const lsb, msb = 0x0101010101010101, 0x8080808080808080

// skipPlain returns the index of the first byte of b at or after i that is
// a quote, a backslash, a control character or not ASCII; len(b) when
// there is none. It tests eight bytes at a time: the bytes of strings,
// one by one, were the largest part of decoding a chunk.
func skipPlain(b []byte, i int) int {
	for ; len(b)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// The high bit of a byte of t is set where x's byte is below
		// 0x20, is a quote or a backslash (a zero byte of q or s), or is
		// not ASCII. A borrow can set it spuriously only above a byte
		// that set it truly, so the lowest one set is a true one.
		q, s := x^(lsb*'"'), x^(lsb*'\\')
		if t := ((x-lsb*0x20)&^x | (q-lsb)&^q | (s-lsb)&^s | x) & msb; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
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
