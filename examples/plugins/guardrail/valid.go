package guardrail

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// validJSON reports whether data is one JSON value with optional white
// space around it, as encoding/json.Valid does (the same grammar, the same
// nesting limit, no UTF-8 check), in one pass without encoding/json's
// per-byte state machine: it runs on every event's data, and was the
// largest part of the guardrail's per-frame cost.
func validJSON(data []byte) bool {
	i, ok := validValue(data, skipSpace(data, 0), 0)
	return ok && skipSpace(data, i) == len(data)
}

// next reads what follows a member or an element at data[i:]: a comma
// (more to come; the index of the next one) or end (done; the index past
// it); anything else is not JSON.
func next(data []byte, i int, end byte) (_ int, done, ok bool) {
	i = skipSpace(data, i)
	if i >= len(data) {
		return i, false, false
	}
	switch data[i] {
	case ',':
		return skipSpace(data, i+1), false, true
	case end:
		return i + 1, true, true
	}
	return i, false, false
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// validValue checks the value at data[i:] (no white space before it) and
// returns the index just past it.
func validValue(data []byte, i, depth int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; c {
	case '{', '[':
		if depth++; depth > maxDepth {
			return i, false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == end {
			return i + 1, true
		}
		for {
			if c == '{' {
				if i >= len(data) || data[i] != '"' {
					return i, false
				}
				var ok bool
				if i, ok = validString(data, i); !ok {
					return i, false
				}
				i = skipSpace(data, i)
				if i >= len(data) || data[i] != ':' {
					return i, false
				}
				i = skipSpace(data, i+1)
			}
			var ok bool
			if i, ok = validValue(data, i, depth); !ok {
				return i, false
			}
			var done bool
			if i, done, ok = next(data, i, end); done || !ok {
				return i, ok
			}
		}
	case '"':
		return validString(data, i)
	case 't':
		return validWord(data, i, "true")
	case 'f':
		return validWord(data, i, "false")
	case 'n':
		return validWord(data, i, "null")
	default:
		return validNumber(data, i)
	}
}

func validWord(data []byte, i int, w string) (int, bool) {
	if len(data)-i < len(w) || string(data[i:i+len(w)]) != w {
		return i, false
	}
	return i + len(w), true
}

// validString checks the string starting at data[i] == '"'.
func validString(data []byte, i int) (int, bool) {
	end, _, ok := scanString(data, i)
	return end, ok
}

// scanString is validString that also reports whether the string is
// plain: ASCII without escapes, so that its text is the bytes between
// the quotes (decoding it would only copy them).
func scanString(data []byte, i int) (_ int, plain, ok bool) {
	plain = true
	for i++; ; {
		// Plain bytes are skipped eight at a time; past the first
		// non-ASCII byte only quotes, escapes and controls stop the skip.
		hi := uint64(msb)
		if !plain {
			hi = 0
		}
		i = skipPlain(data, i, hi)
		if i >= len(data) {
			return i, false, false
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, plain, true
		case c >= utf8.RuneSelf:
			plain = false
			i++
		case c < 0x20:
			return i, false, false
		default: // a backslash
			plain = false
			if i, ok = validEscape(data, i+1); !ok {
				return i, false, false
			}
		}
	}
}

// validEscape checks the escape after a backslash, at data[i:], and
// returns the index just past it.
func validEscape(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch data[i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 1, true
	case 'u':
		if len(data)-i <= 4 {
			return i, false
		}
		for _, h := range data[i+1 : i+5] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return i, false
			}
		}
		return i + 5, true
	}
	return i, false
}

// lsb and msb are the lowest and the highest bit of each byte of a word.
const lsb, msb = 0x0101010101010101, 0x8080808080808080

// skipPlain returns the index of the first byte of data at or after i
// that is a quote, a backslash or a control character, or, with hi = msb,
// not ASCII (hi = 0 lets those through); len(data) when there is none. It
// tests eight bytes at a time: a string's bytes, one by one, were the
// largest part of the walk.
func skipPlain(data []byte, i int, hi uint64) int {
	for ; len(data)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		// The high bit of a byte of t is set where x's byte is below
		// 0x20, or equal to a quote or a backslash (a zero byte of q or
		// b), or has its high bit set (with hi). A borrow can set it
		// spuriously only above a byte that set it truly, so the lowest
		// one set is a true one.
		q, b := x^(lsb*'"'), x^(lsb*'\\')
		t := ((x-lsb*0x20)&^x | (q-lsb)&^q | (b-lsb)&^b | x&hi) & msb
		if t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(data); i++ {
		if c := data[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf && hi != 0 {
			return i
		}
	}
	return i
}

// validNumber checks the number at data[i:]: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(data []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return i, false
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		i = digits(i + 1)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}
