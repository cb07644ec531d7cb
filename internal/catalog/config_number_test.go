package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

func ptr(f float64) *float64 { return &f }

// TestCheckConfig_Numbers: an integer is a whole number an int64 holds, a
// number any finite number; bounds are inclusive; a numeric enum compares
// by value; every decoder's number types are accepted.
func TestCheckConfig_Numbers(t *testing.T) {
	schema := &gateway.ConfigSchema{Fields: []gateway.Field{
		{Name: "status", Type: "integer", Minimum: ptr(400), Maximum: ptr(599)},
		{Name: "ratio", Type: "number", Minimum: ptr(0), Maximum: ptr(1)},
		{Name: "level", Type: "integer", Enum: []string{"1", "2", "3"}},
		{Name: "n", Type: "integer"},
	}}
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want string // "" for no problem
	}{
		{"int", map[string]any{"status": 403}, ""},
		{"float whole", map[string]any{"status": 403.0}, ""},
		{"uint64", map[string]any{"status": uint64(500)}, ""},
		{"json.Number", map[string]any{"status": json.Number("450")}, ""},
		{"fraction", map[string]any{"status": 403.5}, `field "status": want an integer`},
		{"too big for int64", map[string]any{"n": 1e30}, `field "n": want an integer`},
		{"below minimum", map[string]any{"status": 399}, `field "status": 399 is out of range [400, 599]`},
		{"above maximum", map[string]any{"ratio": 1.5}, `field "ratio": 1.5 is out of range [0, 1]`},
		{"number", map[string]any{"ratio": 0.25}, ""},
		{"string for number", map[string]any{"ratio": "0.5"}, `field "ratio": want a number, got "0.5"`},
		{"enum by value", map[string]any{"level": 2.0}, ""},
		{"not in enum", map[string]any{"level": 4}, `field "level": 4 is not one of 1, 2, 3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probs := CheckConfig(schema, tc.cfg)
			switch {
			case tc.want == "" && len(probs) > 0:
				t.Errorf("problems %+v, want none", probs)
			case tc.want != "" && (len(probs) != 1 || !strings.Contains(probs[0].Msg, tc.want)):
				t.Errorf("problems %+v, want one containing %q", probs, tc.want)
			}
		})
	}
}

// TestCheckConfig_Open: an open schema checks the fields it lists and lets
// the others through to the plugin.
func TestCheckConfig_Open(t *testing.T) {
	schema := &gateway.ConfigSchema{Open: true, Fields: []gateway.Field{{Name: "n", Type: "integer"}}}
	if probs := CheckConfig(schema, map[string]any{"n": 1, "key_by": "host"}); len(probs) != 0 {
		t.Errorf("open schema: %+v", probs)
	}
	if probs := CheckConfig(schema, map[string]any{"n": "x"}); len(probs) != 1 {
		t.Errorf("open schema still checks its fields: %+v", probs)
	}
	schema.Open = false
	if probs := CheckConfig(schema, map[string]any{"key_by": "host"}); len(probs) != 1 {
		t.Errorf("closed schema: %+v", probs)
	}
}

// TestLintFields_Bounds: bounds only on numeric fields, minimum at most
// maximum, a default within them.
func TestLintFields_Bounds(t *testing.T) {
	var got []string
	add := func(plugin, rule, fix, format string, args ...any) {
		got = append(got, rule+": "+strings.TrimSpace(strings.ReplaceAll(sprintf(format, args...), "\n", " ")))
	}
	lintFields("p", "config", []gateway.Field{
		{Name: "a", Type: "string", Minimum: ptr(1)},
		{Name: "b", Type: "integer", Minimum: ptr(5), Maximum: ptr(1)},
		{Name: "c", Type: "integer", Minimum: ptr(400), Maximum: ptr(599), Default: 200},
		{Name: "d", Type: "integer", Default: 1.5},
		{Name: "e", Type: "number", Minimum: ptr(0), Default: 0.5},
	}, add)
	want := []string{"bounds, which a string field cannot have", "minimum 5 above its maximum 1", "default 200 is out of range [400, 599]", "default 1.5: not an integer"}
	if len(got) != len(want) {
		t.Fatalf("findings %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("finding %d = %q, want %q", i, got[i], w)
		}
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
