// Package termsafe makes text from untrusted sources safe to print on a
// terminal. A plugin name or description from a url:, file: or dir:
// source, a header from recorded traffic or a plugin's error message may
// hold escape sequences that would recolour, hide, move the cursor, set
// the window title or rewrite what the operator sees; escaped, they show
// as the bytes they are.
package termsafe

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// String escapes every control character of s except TAB and LF: C0
// controls (ESC among them) as \x1b, DEL as \x7f, C1 controls as \u009b,
// Unicode bidirectional overrides and isolates (which reorder what is
// shown) as \u202e, and invalid UTF-8 bytes as \xff. Text without them is
// returned unchanged, without allocating.
func String(s string) string {
	if !needs(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case bad(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Line is String for one line of output: TAB and LF are escaped too.
func Line(s string) string {
	s = String(s)
	if strings.ContainsAny(s, "\t\n") {
		s = strings.NewReplacer("\t", `\t`, "\n", `\n`).Replace(s)
	}
	return s
}

func bad(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func needs(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f || c >= 0x80 {
			if c < 0x80 {
				return true
			}
			// Only some non-ASCII runes need escaping: check them.
			for _, r := range s[i:] {
				if r == utf8.RuneError || bad(r) || r < 0x20 && r != '\t' && r != '\n' || r == 0x7f {
					return true
				}
			}
			return false
		}
	}
	return false
}

// Fields escapes, in place, every string reachable from v (a pointer,
// slice or map): struct fields, slice and array elements, map keys and
// values, through pointers and interfaces. For data that is only shown,
// such as the catalog a TUI browses.
func Fields(v any) {
	walk(reflect.ValueOf(v), 0)
}

func walk(v reflect.Value, depth int) {
	if depth > 64 || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if v.Kind() == reflect.Interface && e.Kind() == reflect.String {
			if s := e.String(); needs(s) && v.CanSet() {
				v.Set(reflect.ValueOf(String(s)).Convert(e.Type()))
			}
			return
		}
		walk(e, depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walk(v.Field(i), depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes are data, not text shown as is
		}
		for i := range v.Len() {
			walk(v.Index(i), depth+1)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			val := reflect.New(v.Type().Elem()).Elem()
			val.Set(v.MapIndex(k))
			walk(val, depth+1)
			nk := k
			if k.Kind() == reflect.String && needs(k.String()) {
				nk = reflect.ValueOf(String(k.String())).Convert(k.Type())
				v.SetMapIndex(k, reflect.Value{})
			}
			v.SetMapIndex(nk, val)
		}
	case reflect.String:
		if v.CanSet() && needs(v.String()) {
			v.SetString(String(v.String()))
		}
	}
}

// JSON rewrites, in JSON text such as encoding/json writes, the runes it
// leaves raw that a terminal acts on: C1 controls (U+009B is CSI) and
// bidirectional overrides and isolates, as \uXXXX escapes. In JSON they
// can only stand inside strings, where the escape means the same rune, so
// the data is unchanged. (encoding/json already escapes C0 controls and
// replaces invalid UTF-8.)
func JSON(b []byte) []byte {
	if !needs(string(b)) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if bad(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// Safe reports whether s prints on a terminal as it is: String would not
// change it.
func Safe(s string) bool { return !needs(s) }
