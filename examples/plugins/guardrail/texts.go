package guardrail

import (
	"bytes"
	"slices"
)

// appendTexts appends jsonTexts' strings to out without copying them:
// plain strings are views of data, valid while data is. ok is false when
// data is not JSON (out is then as it was).
//
// It validates data and gathers its texts in one pass (validJSON's
// grammar and nesting limit): each event's JSON was validated, then
// walked once per level of nesting, every member's value scanned to its
// end before it was visited.
func appendTexts(out []string, data []byte, all bool) (_ []string, ok bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || (data[0] != '{' && data[0] != '[') {
		return out, false
	}
	n := len(out)
	w := walker{data: data, all: all, out: out}
	if i, ok := w.value(0, nil, 0); !ok || skipSpace(data, i) != len(data) {
		clear(w.out[n:]) // hold no view of data
		return w.out[:n], false
	}
	return w.out, true
}

// walker is one pass of appendTexts over data.
type walker struct {
	data []byte
	all  bool
	out  []string
}

// member is one object member: its decoded key and the texts its value
// added, out[from:to].
type member struct {
	key      []byte
	from, to int
}

// value checks the value at data[i:] (no white space before it), found
// under key, appends its texts and returns the index just past it.
func (w *walker) value(i int, key []byte, depth int) (int, bool) {
	data := w.data
	if i >= len(data) {
		return i, false
	}
	switch data[i] {
	case '{':
		return w.object(i, depth+1)
	case '[':
		if depth++; depth > maxDepth {
			return i, false
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = w.value(i, key, depth); !ok {
				return i, false
			}
			var done bool
			if i, done, ok = next(data, i, ']'); done || !ok {
				return i, ok
			}
		}
	case '"':
		end, ok := validString(data, i)
		if ok && (w.all || textKeys[string(key)]) {
			w.out = append(w.out, jsonString(data[i:end]))
		}
		return end, ok
	}
	return validValue(data, i, depth)
}

// object is value for the object at data[i]: its members' texts go out
// in sorted key order (a repeated key counts once, its last value), as
// walking the decoded map in sorted order gives them.
func (w *walker) object(i, depth int) (int, bool) {
	data := w.data
	if depth > maxDepth {
		return i, false
	}
	var buf [8]member
	ms := buf[:0]
	sorted := true
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false
		}
		kend, ok := validString(data, i)
		if !ok {
			return kend, false
		}
		k := jsonKey(data[i:kend])
		i = skipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		from := len(w.out)
		if i, ok = w.value(skipSpace(data, i+1), k, depth); !ok {
			return i, false
		}
		if len(ms) > 0 && bytes.Compare(ms[len(ms)-1].key, k) >= 0 {
			sorted = false
		}
		ms = append(ms, member{k, from, len(w.out)})
		var done bool
		if i, done, ok = next(data, i, '}'); !ok {
			return i, false
		} else if done {
			if !sorted {
				w.reorder(ms)
			}
			return i, true
		}
	}
}

// reorder puts the texts of an object's members, out[ms[0].from:], in
// sorted key order, dropping those of a repeated key but its last.
func (w *walker) reorder(ms []member) {
	start := ms[0].from
	if len(w.out) == start {
		return // no texts to move or drop
	}
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	var small [8]string
	tmp := small[:0]
	for j, m := range ms {
		if j+1 < len(ms) && bytes.Equal(ms[j+1].key, m.key) {
			continue // a later duplicate wins, as in a decoded map
		}
		tmp = append(tmp, w.out[m.from:m.to]...)
	}
	n := copy(w.out[start:], tmp)
	clear(w.out[start+n:])
	w.out = w.out[:start+n]
}
