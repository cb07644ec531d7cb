package extschema

import (
	"encoding/json"
	"slices"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// An extension value is checked and traced as a decoded document: a
// parser stores its whole result at the end of every stream, and
// encoding/json's decoder (its per-byte scanner) and its reflective
// encoder of maps were most of that exchange's extension cost. The two
// functions here do the same without either; anything they do not take
// goes the encoding/json way, so the outcome is the same in every case
// (TestDecodeMatchesUnmarshalJSON, TestCanonicalMatchesMarshal,
// FuzzDecodeCanonical).

// decodeJSON decodes b into what jsonschema.UnmarshalJSON makes of it
// (objects as map[string]any, arrays as []any, numbers as json.Number as
// written, a repeated key's last value standing, strings coerced to valid
// UTF-8). ok is false for anything it does not take, invalid JSON among
// it; the caller then decodes with UnmarshalJSON, whose error stands.
func decodeJSON(b []byte) (any, bool) {
	d := decoder{b: b}
	v, ok := d.value(0)
	if !ok {
		return nil, false
	}
	if d.space(); d.i != len(d.b) {
		return nil, false
	}
	return v, true
}

// maxFastDepth is the nesting past which decodeJSON leaves a document to
// encoding/json (whose own limit, 10,000, then decides).
const maxFastDepth = 1000

type decoder struct {
	b []byte
	i int
}

func (d *decoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value decodes the value at d.i, after white space.
func (d *decoder) value(depth int) (any, bool) {
	d.space()
	if d.i >= len(d.b) {
		return nil, false
	}
	switch c := d.b[d.i]; c {
	case '{':
		return d.object(depth + 1)
	case '[':
		return d.array(depth + 1)
	case '"':
		return d.str()
	case 't':
		return true, d.word("true")
	case 'f':
		return false, d.word("false")
	case 'n':
		return nil, d.word("null")
	default:
		return d.number()
	}
}

func (d *decoder) object(depth int) (any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	d.i++ // '{'
	m := map[string]any{}
	d.space()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		if done, ok := d.next('}'); !ok {
			return nil, false
		} else if done {
			return m, true
		}
	}
}

func (d *decoder) array(depth int) (any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	d.i++ // '['
	a := []any{}
	d.space()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if done, ok := d.next(']'); !ok {
			return nil, false
		} else if done {
			return a, true
		}
	}
}

// next reads what follows a member or an element: a comma (more to come)
// or end (done); anything else is not JSON.
func (d *decoder) next(end byte) (done, ok bool) {
	d.space()
	if d.i >= len(d.b) {
		return false, false
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		return false, true
	case end:
		d.i++
		return true, true
	}
	return false, false
}

func (d *decoder) word(w string) bool {
	if len(d.b)-d.i < len(w) || string(d.b[d.i:d.i+len(w)]) != w {
		return false
	}
	d.i += len(w)
	return true
}

// number takes -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? as written.
func (d *decoder) number() (any, bool) {
	b, i := d.b, d.i
	digits := func(i int) int {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return nil, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(i + 1)
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return nil, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return nil, false
		}
		i = j
	}
	n := json.Number(b[d.i:i])
	d.i = i
	return n, true
}

// str decodes the string at d.i (a '"'), as encoding/json unquotes one:
// invalid UTF-8 and lone surrogates become U+FFFD.
func (d *decoder) str() (any, bool) {
	b := d.b
	start := d.i + 1
	i := start
	for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' && b[i] < utf8.RuneSelf {
		i++
	}
	if i < len(b) && b[i] == '"' {
		d.i = i + 1
		return string(b[start:i]), true
	}
	// Room for the whole token: decoding never makes a string longer
	// than its escaped form, except that each invalid byte becomes
	// U+FFFD (append grows past it then).
	end := i
	for end < len(b) && b[end] != '"' {
		if b[end] == '\\' {
			end++
		}
		end++
	}
	out := append(make([]byte, 0, min(end, len(b))-start), b[start:i]...)
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			d.i = i + 1
			// out is this string's own: no copy.
			return unsafe.String(unsafe.SliceData(out), len(out)), true
		case c < 0x20:
			return nil, false
		case c == '\\':
			if i+1 >= len(b) {
				return nil, false
			}
			switch e := b[i+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := getu4(b[i:])
				if r < 0 {
					return nil, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if dec := utf16.DecodeRune(r, getu4(b[i:])); dec != unicode.ReplacementChar {
						i += 6
						out = utf8.AppendRune(out, dec)
						continue
					}
					r = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return nil, false
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			out = utf8.AppendRune(out, r) // U+FFFD for an invalid byte
			i += size
		}
	}
	return nil, false
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// appendCanonical appends json.Marshal(v) for a document decodeJSON or
// jsonschema.UnmarshalJSON made: object keys sorted, numbers as written,
// strings HTML-safe. ok is false for a type such a document does not
// hold; the caller then marshals v with encoding/json.
func appendCanonical(dst []byte, v any) (_ []byte, ok bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		if v {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case string:
		return appendString(dst, v), true
	case json.Number:
		if v == "" {
			return append(dst, '0'), true
		}
		if !validNumber(string(v)) {
			return dst, false
		}
		return append(dst, v...), true
	case []any:
		if v == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, ok = appendCanonical(dst, e); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), true
		}
		var buf [16]string
		keys := buf[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendString(dst, k), ':')
			if dst, ok = appendCanonical(dst, v[k]); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	}
	return dst, false
}

// validNumber reports whether s is a JSON number, as json.Marshal checks
// a json.Number before writing it.
func validNumber(s string) bool {
	d := decoder{b: []byte(s)}
	_, ok := d.number()
	return ok && d.i == len(s)
}

// appendString appends s quoted as json.Marshal quotes a string: <, >
// and & escaped, control characters escaped, invalid UTF-8 as \ufffd,
// U+2028 and U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
