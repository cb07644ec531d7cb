package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/abkit/abkit/internal/limits"
)

// A catalog or chain file that is a JSON object is decoded with
// encoding/json: the YAML decoder took 72 % of TUI start-up on a JSON
// catalog. Anything the JSON path does not settle by itself (an unknown
// field, a duplicate key, too deep a nesting, trailing data, input that is
// YAML flow style rather than JSON, a value of the wrong type) goes
// through the YAML path, so messages, their line:column and what is
// accepted stay exactly as before. Only a document that is neither JSON
// nor YAML is reported from the JSON syntax error, positioned by its byte
// offset. Errors are rare; the YAML path's cost is paid only then.

// looksJSON reports whether data starts, after white space, with '{'.
func looksJSON(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '{'
}

// errNotJSON says the JSON path cannot decide; the YAML path decodes.
var errNotJSON = errors.New("not settled by the JSON path")

// decodeJSON decodes a JSON document strictly into v. It returns
// errNotJSON when the YAML path must decide (see above) and a
// *json.SyntaxError for malformed JSON, which may still be YAML.
func decodeJSON(data []byte, v any) error {
	if !jsonPlain(data) {
		return errNotJSON
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		if len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) != 0 {
			return errNotJSON // trailing data: let the YAML path report it
		}
		return nil
	case errors.As(err, &se):
		return se
	}
	// An unknown field, a wrong type or an early end: the YAML path words
	// and positions it. A wrong type also goes there because the YAML
	// decoder accepts some (a number where a string is wanted).
	return errNotJSON
}

// lineCol turns a byte offset into a 1-based line and column (in
// characters, as the YAML decoder counts them).
func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

// syntaxError positions a JSON syntax error by its byte offset.
func syntaxError(name string, data []byte, se *json.SyntaxError) error {
	off := int(se.Offset) - 1 // the offset counts the offending byte
	line, col := lineCol(data, max(off, 0))
	return &PosError{File: name, Line: line, Col: col, Msg: "invalid JSON: " + se.Error()}
}

// jsonPlain scans data once and reports whether the JSON path may decode
// it: no object repeats a key (encoding/json would keep the last one
// silently; the YAML path refuses it) and nesting stays within
// limits.YAMLDepth (the YAML path reports deeper documents). It does not
// validate syntax; the decoder does.
func jsonPlain(data []byte) bool {
	type level struct {
		object bool
		start  int                 // where this object's keys start in keys
		big    map[string]struct{} // the keys, once there are too many to search
	}
	var stack []level
	depth := limits.YAMLDepth.Int()
	var keys [][]byte // the keys of every open object, innermost last
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			if len(stack) >= depth {
				return false
			}
			stack = append(stack, level{object: data[i] == '{', start: len(keys)})
			expectKey = data[i] == '{'
		case '}', ']':
			if len(stack) == 0 {
				return true // malformed: the decoder reports it
			}
			keys = keys[:stack[len(stack)-1].start]
			stack = stack[:len(stack)-1]
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].object
		case '"':
			j := i + 1
			escaped := false
			for ; j < len(data); j++ {
				if data[j] == '\\' {
					escaped = true
					j++
				} else if data[j] == '"' {
					break
				}
			}
			if j >= len(data) {
				return true // unterminated: the decoder reports it
			}
			if expectKey && len(stack) > 0 {
				key := data[i+1 : j]
				if escaped {
					k, err := strconv.Unquote(string(data[i : j+1]))
					if err != nil {
						return false
					}
					key = []byte(k)
				}
				if l := &stack[len(stack)-1]; seen(l.start, &l.big, &keys, key) {
					return false
				}
				expectKey = false
			}
			i = j
		}
	}
	return true
}

// seen records key among the current object's keys (keys[start:], or big
// once there are many) and reports whether it was already there. Small
// objects, the usual case, are searched in place without allocating.
func seen(start int, big *map[string]struct{}, keys *[][]byte, key []byte) bool {
	if *big == nil {
		for _, k := range (*keys)[start:] {
			if bytes.Equal(k, key) {
				return true
			}
		}
		if len(*keys)-start < 16 {
			*keys = append(*keys, key)
			return false
		}
		*big = make(map[string]struct{}, 32)
		for _, k := range (*keys)[start:] {
			(*big)[string(k)] = struct{}{}
		}
	}
	if _, ok := (*big)[string(key)]; ok {
		return true
	}
	(*big)[string(key)] = struct{}{}
	return false
}
