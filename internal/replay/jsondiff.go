package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// DiffReports explains how two reports in their JSON form differ, one
// line per changed value, in the golden file's own terms: JSON keys
// (outcome.relayed_bytes), and each changed event named by its seq, hook
// and plugin rather than by its index. wantName and gotName label the two
// sides ("golden", "now"). It returns "" when they are equal.
//
// It is written here rather than taken from go-cmp because go-cmp names Go
// struct fields (Relayed), which the person reading a CI log cannot find
// in the golden file.
func DiffReports(want, got []byte, wantName, gotName string) (string, error) {
	var a, b any
	for _, x := range []struct {
		data []byte
		v    *any
	}{{want, &a}, {got, &b}} {
		d := json.NewDecoder(bytes.NewReader(x.data))
		d.UseNumber()
		if err := d.Decode(x.v); err != nil {
			return "", err
		}
	}
	var out []string
	jd := jsonDiff{want: wantName, got: gotName, out: &out}
	jd.value("", a, b)
	return strings.Join(out, "\n"), nil
}

type jsonDiff struct {
	want, got string
	out       *[]string
}

func (d jsonDiff) add(path, format string, args ...any) {
	*d.out = append(*d.out, strings.TrimPrefix(path, ".")+": "+fmt.Sprintf(format, args...))
}

func (d jsonDiff) value(path string, a, b any) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		sep := "."
		if strings.HasSuffix(path, ")") {
			sep = " " // after an event's label: "events seq 4 (…) action"
		}
		for _, k := range keys {
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inA:
				d.add(path+sep+k, "not in %s, %s %s", d.want, d.got, compact(y))
			case !inB:
				d.add(path+sep+k, "%s %s, not in %s", d.want, compact(x), d.got)
			default:
				d.value(path+sep+k, x, y)
			}
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		if len(av) != len(bv) {
			d.add(path, "%s has %d, %s %d", d.want, len(av), d.got, len(bv))
		}
		for i := range max(len(av), len(bv)) {
			var x, y any
			if i < len(av) {
				x = av[i]
			}
			if i < len(bv) {
				y = bv[i]
			}
			ip := fmt.Sprintf("%s[%d]", path, i)
			if l := eventLabel(x, y); l != "" {
				ip = path + " " + l
			}
			switch {
			case i >= len(av):
				d.add(ip, "not in %s, %s %s", d.want, d.got, compact(y))
			case i >= len(bv):
				d.add(ip, "%s %s, not in %s", d.want, compact(x), d.got)
			default:
				d.value(ip, x, y)
			}
		}
		return
	}
	if !equalJSON(a, b) {
		d.add(path, "%s %s, %s %s", d.want, compact(a), d.got, compact(b))
	}
}

// eventLabel names a trace event by seq, hook, plugin and frame, from
// either side: "seq 4 (on_response_frame, guardrail, frame 2)".
func eventLabel(a, b any) string {
	m, ok := b.(map[string]any)
	if !ok {
		if m, ok = a.(map[string]any); !ok {
			return ""
		}
	}
	seq, ok := m["seq"]
	if !ok {
		return ""
	}
	parts := []string{}
	for _, k := range []string{"hook", "plugin"} {
		if s, ok := m[k].(string); ok && s != "" {
			parts = append(parts, s)
		}
	}
	if f, ok := m["frame"]; ok {
		parts = append(parts, fmt.Sprintf("frame %v", f))
	}
	return fmt.Sprintf("seq %v (%s)", seq, strings.Join(parts, ", "))
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
