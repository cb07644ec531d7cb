package guardrail

import (
	"bytes"
	"slices"
	"unsafe"
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
	if !all {
		// The common chunk shapes, without the walker's bookkeeping.
		if texts, ok := chunkTexts(out, data); ok {
			return texts, true
		}
	}
	return walkTexts(out, data, all)
}

// walkTexts is appendTexts for data without space around it, by the
// general walk.
func walkTexts(out []string, data []byte, all bool) (_ []string, ok bool) {
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

// smallObject is how many members an object has that object keeps on
// the stack.
const smallObject = 8

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
		end, plain, ok := scanString(data, i)
		if ok && (w.all || isTextKey(key)) {
			s := view(data[i+1 : end-1])
			if !plain {
				s = jsonString(data[i:end])
			}
			w.out = append(w.out, s)
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
	var buf [smallObject]member
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
		kend, plain, ok := scanString(data, i)
		if !ok {
			return kend, false
		}
		k := data[i+1 : kend-1]
		if !plain {
			k = []byte(jsonString(data[i:kend]))
		}
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
			if !sorted && !inOrder(ms) {
				w.reorder(ms)
			}
			return i, true
		}
	}
}

// inOrder reports whether the texts of an object's members, sorted is
// false for, are already as reorder leaves them: those of the members that
// added any come in increasing key order, and no other member has the key
// of one of them (which would drop its texts or another's). A chunk's
// members are seldom sorted ("index" before "delta"), but seldom more
// than one of them adds texts, and sorting them was a measurable share of
// a frame's cost. Past a handful of members the pairwise check is not
// worth it: reorder sorts.
func inOrder(ms []member) bool {
	if len(ms) > smallObject {
		return false
	}
	var last []byte
	have := false
	for j, m := range ms {
		if m.from == m.to {
			continue
		}
		if have && bytes.Compare(last, m.key) >= 0 {
			return false
		}
		for k := range ms {
			if k != j && bytes.Equal(ms[k].key, m.key) {
				return false
			}
		}
		last, have = m.key, true
	}
	return true
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

// isTextKey reports whether key is one of textKeys: a switch, as a map
// lookup for every string value was a measurable share of a frame's cost.
func isTextKey(key []byte) bool {
	switch string(key) {
	case "content", "text", "thinking", "reasoning_content", "partial_json", "arguments":
		return true
	}
	return false
}

// view is b as a string without a copy; b must not change while it is used.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
