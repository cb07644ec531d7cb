package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/abkit/abkit/sdk/gateway"
)

// ConfigProblem is one way a config block breaks its plugin's schema.
type ConfigProblem struct {
	// Path is where in the block, relative to it: "" for the block
	// itself, ".check", ".rules[0].name".
	Path string
	Msg  string
	Fix  string
}

// CheckConfig checks a decoded config block v (as a YAML or JSON decoder
// produces it: maps, slices, numbers, strings, booleans, nil) against
// schema, the way abkit's plugins decode their config: the block is a
// mapping; every key is a field of the schema; every required field is
// given; every value has the field's type and, where the field has an
// enum, is one of its values. It returns every problem at once, sorted by
// path. A nil schema takes no config, which the pipeline validator
// reports (P6); CheckConfig then has nothing to say.
func CheckConfig(schema *gateway.ConfigSchema, v any) []ConfigProblem {
	if schema == nil {
		return nil
	}
	var out []ConfigProblem
	if v == nil {
		if req := requiredFields(schema.Fields); len(req) > 0 {
			out = append(out, ConfigProblem{
				Msg: fmt.Sprintf("missing required field %s", quoteAll(req)),
				Fix: fmt.Sprintf("give a config block with %s", strings.Join(req, ", ")),
			})
		}
		return out
	}
	checkObjectOpen(&out, "", schema.Fields, v, schema.Open)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func checkObject(out *[]ConfigProblem, path string, fields []gateway.Field, v any) {
	checkObjectOpen(out, path, fields, v, false)
}

// checkObjectOpen is checkObject; open lets keys the fields do not list
// through (ConfigSchema.Open: the plugin checks them).
func checkObjectOpen(out *[]ConfigProblem, path string, fields []gateway.Field, v any, open bool) {
	m, ok := asMap(v)
	if !ok {
		*out = append(*out, ConfigProblem{Path: path,
			Msg: fmt.Sprintf("want a mapping, got %s", kindOf(v)),
			Fix: "write a mapping with the fields " + fieldNames(fields)})
		return
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i := slices.Index(names, k)
		if i < 0 && open {
			continue
		}
		if i < 0 {
			fix := "remove it, or use one of the known fields: " + fieldNames(fields)
			if near := DidYouMean(k, names); near != "" {
				fix = near + " (known fields: " + fieldNames(fields) + ")"
			}
			*out = append(*out, ConfigProblem{Path: path + "." + k, Msg: fmt.Sprintf("unknown field %q", k), Fix: fix})
			continue
		}
		checkValue(out, path+"."+k, fields[i], m[k])
	}
	for _, f := range fields {
		if _, given := m[f.Name]; f.Required && !given {
			*out = append(*out, ConfigProblem{Path: path,
				Msg: fmt.Sprintf("missing required field %q", f.Name),
				Fix: fmt.Sprintf("add %s: (%s)", f.Name, f.Type)})
		}
	}
}

func checkValue(out *[]ConfigProblem, path string, f gateway.Field, v any) {
	if v == nil {
		// An explicit null leaves the field at its default, as JSON
		// decoding does.
		return
	}
	bad := func(format string, args ...any) {
		*out = append(*out, ConfigProblem{Path: path, Msg: fmt.Sprintf(format, args...), Fix: fixFor(f)})
	}
	rv := reflect.ValueOf(v)
	switch f.Type {
	case "string", "duration":
		s, ok := v.(string)
		if !ok {
			bad("field %q: want %s, got %s", f.Name, article(f.Type), kindOf(v))
			return
		}
		if f.Type == "duration" && s != "" {
			if _, err := time.ParseDuration(s); err != nil {
				bad("field %q: %q is not a duration", f.Name, s)
				return
			}
		}
		checkEnum(out, path, f, s)
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("field %q: want a boolean, got %s", f.Name, kindOf(v))
		}
	case "integer", "number":
		n, ok := numberOf(v)
		switch {
		case !ok:
			bad("field %q: want %s, got %s", f.Name, article(f.Type), kindOf(v))
			return
		case f.Type == "integer" && n != math.Trunc(n):
			bad("field %q: want an integer, got %s", f.Name, kindOf(v))
			return
		case f.Type == "integer" && !IsInteger(n):
			bad("field %q: want an integer, got %s, beyond what 64 bits hold", f.Name, kindOf(v))
			return
		}
		checkNumber(out, path, f, n)
	case "array":
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			bad("field %q: want a list, got %s", f.Name, kindOf(v))
			return
		}
		for i := range rv.Len() {
			item := rv.Index(i).Interface()
			ip := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case len(f.Fields) > 0:
				checkObject(out, ip, f.Fields, item)
			case len(f.Enum) > 0:
				s, ok := item.(string)
				if !ok {
					*out = append(*out, ConfigProblem{Path: ip, Msg: fmt.Sprintf("field %q item %d: want a string, got %s", f.Name, i, kindOf(item)), Fix: fixFor(f)})
					continue
				}
				checkEnum(out, ip, f, s)
			}
		}
	case "object":
		if _, ok := asMap(v); !ok {
			bad("field %q: want a mapping, got %s", f.Name, kindOf(v))
			return
		}
		if len(f.Fields) > 0 {
			checkObject(out, path, f.Fields, v)
		}
	}
}

// numberOf returns a decoded numeric value as a float64: any Go integer or
// float type, or a json.Number. NaN and infinities are not numbers a config
// can hold.
func numberOf(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return f, err == nil
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return float64(rv.Int()), true
	case rv.CanUint():
		return float64(rv.Uint()), true
	case rv.CanFloat():
		f := rv.Float()
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// IsInteger reports whether n is a whole number an int64 holds: what a
// plugin decoding an integer field into an int can take.
func IsInteger(n float64) bool {
	return n == math.Trunc(n) && n >= -(1<<63) && n < 1<<63
}

// checkNumber checks a numeric value against the field's bounds and enum
// (compared by value: "2" matches 2.0).
func checkNumber(out *[]ConfigProblem, path string, f gateway.Field, n float64) {
	text := strconv.FormatFloat(n, 'g', -1, 64)
	if f.Minimum != nil && n < *f.Minimum || f.Maximum != nil && n > *f.Maximum {
		*out = append(*out, ConfigProblem{Path: path, Msg: fmt.Sprintf("field %q: %s is out of range %s", f.Name, text, RangeText(f)), Fix: fixFor(f)})
		return
	}
	if len(f.Enum) == 0 {
		return
	}
	for _, e := range f.Enum {
		if x, err := strconv.ParseFloat(e, 64); err == nil && x == n {
			return
		}
	}
	*out = append(*out, ConfigProblem{Path: path, Msg: fmt.Sprintf("field %q: %s is not one of %s", f.Name, text, strings.Join(f.Enum, ", ")), Fix: fixFor(f)})
}

// RangeText is a field's bounds as text: "[400, 599]", "≥ 1", "≤ 10", or
// "" when it has none.
func RangeText(f gateway.Field) string {
	num := func(p *float64) string { return strconv.FormatFloat(*p, 'g', -1, 64) }
	switch {
	case f.Minimum != nil && f.Maximum != nil:
		return "[" + num(f.Minimum) + ", " + num(f.Maximum) + "]"
	case f.Minimum != nil:
		return "≥ " + num(f.Minimum)
	case f.Maximum != nil:
		return "≤ " + num(f.Maximum)
	}
	return ""
}

func checkEnum(out *[]ConfigProblem, path string, f gateway.Field, s string) {
	if len(f.Enum) == 0 || slices.Contains(f.Enum, s) {
		return
	}
	fix := "use one of " + strings.Join(f.Enum, ", ")
	if near := DidYouMean(s, f.Enum); near != "" {
		fix = near + " " + fix
	}
	*out = append(*out, ConfigProblem{Path: path, Msg: fmt.Sprintf("field %q: %q is not one of %s", f.Name, s, strings.Join(f.Enum, ", ")), Fix: fix})
}

func fixFor(f gateway.Field) string {
	want := article(f.Type)
	switch f.Type {
	case "array":
		want = "a list, such as [a, b]"
	case "object":
		want = "a mapping"
	case "duration":
		want = "a duration such as 30s"
	}
	if len(f.Enum) > 0 {
		return fmt.Sprintf("write %s: one of %s", want, strings.Join(f.Enum, ", "))
	}
	if r := RangeText(f); r != "" {
		return "write " + want + " in " + r
	}
	return "write " + want
}

// asMap returns v as a string-keyed map, whichever map type the decoder
// made.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[fmt.Sprint(k)] = x
		}
		return out, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map {
		return nil, false
	}
	out := make(map[string]any, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		out[fmt.Sprint(it.Key().Interface())] = it.Value().Interface()
	}
	return out, true
}

// kindOf names a decoded value's type as a config author writes it.
func kindOf(v any) string {
	if v == nil {
		return "null"
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.String:
		return strconv.Quote(rv.String())
	case rv.Kind() == reflect.Bool:
		return "a boolean"
	case rv.CanInt(), rv.CanUint():
		return "the integer " + scalarString(v)
	case rv.CanFloat():
		return "the number " + scalarString(v)
	case rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array:
		return "a list"
	case rv.Kind() == reflect.Map:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

func requiredFields(fields []gateway.Field) []string {
	var out []string
	for _, f := range fields {
		if f.Required {
			out = append(out, f.Name)
		}
	}
	return out
}

func fieldNames(fields []gateway.Field) string {
	if len(fields) == 0 {
		return "(none)"
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
