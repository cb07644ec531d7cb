package gateway_test

import (
	"encoding/json"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

// schemaCases are the schemas the config tests share, with the defaults
// and sample each must give (as JSON, compared after decoding).
var schemaCases = []struct {
	name           string
	schema         *gateway.ConfigSchema
	defaults, samp string // "" means nil
}{
	{name: "nil schema", schema: nil},
	{name: "no fields", schema: &gateway.ConfigSchema{}, defaults: `{}`, samp: `{}`},
	{
		name: "every type without defaults",
		schema: &gateway.ConfigSchema{Fields: []gateway.Field{
			{Name: "s", Type: "string"},
			{Name: "i", Type: "integer"},
			{Name: "n", Type: "number"},
			{Name: "b", Type: "boolean"},
			{Name: "d", Type: "duration"},
			{Name: "a", Type: "array"},
			{Name: "o", Type: "object"},
			{Name: "u", Type: "no-such-type"},
		}},
		defaults: `{}`,
		samp:     `{"s":"example","i":1,"n":1,"b":false,"d":"1s","a":["example"],"o":{},"u":"example"}`,
	},
	{
		name: "defaults win over placeholders",
		schema: &gateway.ConfigSchema{Fields: []gateway.Field{
			{Name: "mode", Type: "string", Default: "strict", Enum: []string{"lax", "strict"}},
			{Name: "limit", Type: "integer", Default: 10},
			{Name: "name", Type: "string", Required: true},
		}},
		defaults: `{"mode":"strict","limit":10}`,
		samp:     `{"mode":"strict","limit":10,"name":"example"}`,
	},
	{
		name: "enums give their first value",
		schema: &gateway.ConfigSchema{Fields: []gateway.Field{
			{Name: "mode", Type: "string", Enum: []string{"lax", "strict"}},
			{Name: "level", Type: "integer", Enum: []string{"3", "5"}},
			{Name: "bad", Type: "number", Enum: []string{"high"}},
			{Name: "every", Type: "duration", Enum: []string{"5m"}},
			{Name: "tags", Type: "array", Enum: []string{"x"}},
		}},
		defaults: `{}`,
		samp:     `{"mode":"lax","level":3,"bad":1,"every":"5m","tags":["x"]}`,
	},
	{
		name: "nested objects and arrays of objects",
		schema: &gateway.ConfigSchema{Fields: []gateway.Field{
			{Name: "limits", Type: "object", Fields: []gateway.Field{
				{Name: "rps", Type: "number", Default: 5.5},
				{Name: "burst", Type: "integer"},
			}},
			{Name: "rules", Type: "array", Fields: []gateway.Field{
				{Name: "tool", Type: "string"},
				{Name: "allow", Type: "boolean", Default: true},
			}},
			{Name: "empty", Type: "object"},
		}},
		defaults: `{"limits":{"rps":5.5}}`,
		samp:     `{"limits":{"rps":5.5,"burst":1},"rules":[{"tool":"example","allow":true}],"empty":{}}`,
	},
	{
		name: "a default that does not marshal",
		schema: &gateway.ConfigSchema{Fields: []gateway.Field{
			{Name: "f", Type: "string", Default: func() {}},
		}},
	},
}

// sameJSON reports whether got is the JSON want ("" for nil).
func sameJSON(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	if want == "" || got == nil {
		return want == "" && got == nil
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad test: %s: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}

func TestConfigSchemaDefaults(t *testing.T) {
	for _, tc := range schemaCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.schema.Defaults(); !sameJSON(t, got, tc.defaults) {
				t.Errorf("Defaults() = %s, want %s", got, tc.defaults)
			}
		})
	}
}

func TestConfigSchemaSample(t *testing.T) {
	for _, tc := range schemaCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.schema.Sample(); !sameJSON(t, got, tc.samp) {
				t.Errorf("Sample() = %s, want %s", got, tc.samp)
			}
		})
	}
}

// TestProbeConfigs_P2: no config first, then the defaults, then the sample;
// what does not marshal is left out (P2: any config that makes an instance
// tells the truth about capabilities).
func TestProbeConfigs_P2(t *testing.T) {
	for _, tc := range schemaCases {
		t.Run(tc.name, func(t *testing.T) {
			want := []string{""}
			for _, w := range []string{tc.defaults, tc.samp} {
				if w != "" {
					want = append(want, w)
				}
			}
			got := gateway.ProbeConfigs(tc.schema)
			if len(got) != len(want) {
				t.Fatalf("ProbeConfigs() = %q, want %q", got, want)
			}
			for i := range got {
				if !sameJSON(t, got[i], want[i]) {
					t.Errorf("ProbeConfigs()[%d] = %s, want %s", i, got[i], want[i])
				}
			}
		})
	}
}

// TestProbeConfigs_Examples: a schema's examples are tried last, after
// none, the defaults and the sample; Describes says whether the schema
// gives anything to try.
func TestProbeConfigs_Examples(t *testing.T) {
	s := &gateway.ConfigSchema{Open: true, Examples: []json.RawMessage{json.RawMessage(`{"key":"k"}`)}}
	got := gateway.ProbeConfigs(s)
	if len(got) != 4 || string(got[3]) != `{"key":"k"}` {
		t.Errorf("ProbeConfigs = %q, want none, defaults, sample, then the example", got)
	}
	if !s.Describes() || (&gateway.ConfigSchema{}).Describes() || (*gateway.ConfigSchema)(nil).Describes() {
		t.Error("Describes: want true only for a schema with fields or examples")
	}
}

// TestSample_Bounds: a sample number respects the field's bounds, and an
// integer's sample stays whole.
func TestSample_Bounds(t *testing.T) {
	lo, hi := 400.5, 0.5
	s := &gateway.ConfigSchema{Fields: []gateway.Field{
		{Name: "status", Type: "integer", Minimum: &lo},
		{Name: "ratio", Type: "number", Maximum: &hi},
	}}
	if got := string(s.Sample()); got != `{"ratio":0.5,"status":401}` {
		t.Errorf("Sample = %s", got)
	}
}
