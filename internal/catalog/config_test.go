package catalog

import (
	"strings"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

// TestValidateConfigAgainstSchema checks config blocks against a catalog
// schema with no plugin to run (a file: source): every problem found, at
// the offending key's line and column, with the nearest name.
func TestValidateConfigAgainstSchema(t *testing.T) {
	cat := &Catalog{Plugins: []Descriptor{{
		Name:         "guard",
		Description:  "Guards",
		Capabilities: &Capabilities{},
		Config: &gateway.ConfigSchema{Fields: []gateway.Field{
			{Name: "check", Type: "string", Enum: []string{"request", "response", "both"}},
			{Name: "allow", Type: "array", Required: true},
			{Name: "status", Type: "integer"},
			{Name: "ratio", Type: "number"},
			{Name: "on", Type: "boolean"},
			{Name: "every", Type: "duration"},
			{Name: "sides", Type: "array", Enum: []string{"in", "out"}},
			{Name: "rules", Type: "array", Fields: []gateway.Field{{Name: "id", Type: "string", Required: true}}},
			{Name: "limits", Type: "object", Fields: []gateway.Field{{Name: "max", Type: "integer"}}},
		}},
	}}}
	tests := []struct {
		name, config string
		want         []string // "LINE:COL message part"
	}{
		{"valid", "{check: both, allow: [a], status: 3, ratio: 0.5, on: true, every: 2s, sides: [in], rules: [{id: x}], limits: {max: 2}}", nil},
		{"typo", "\n      allow: []\n      chek: response", []string{`5:7 unknown field "chek"|did you mean "check"?`}},
		{"enum", "\n      allow: []\n      check: respnse", []string{`5:7 "respnse" is not one of|did you mean "response"?`}},
		{"string for list", "\n      allow: search", []string{`4:7 field "allow": want a list, got "search"`}},
		{"no block", "", []string{`2:5 missing required field "allow"`}},
		{"not a mapping", " [a]", []string{`3:5 want a mapping, got a list`}},
		{"types", "\n      allow: []\n      status: 1.5\n      ratio: x\n      on: 1\n      every: soon", []string{
			`8:7 field "every": "soon" is not a duration`, `7:7 field "on": want a boolean, got the integer 1`,
			`6:7 field "ratio": want a number, got "x"`, `5:7 field "status": want an integer, got the number 1.5`}},
		{"nested", "\n      allow: []\n      sides: [in, up]\n      rules: [{idd: x}]\n      limits: {max: many}", []string{
			`7:16 field "max": want an integer`, `6:16 unknown field "idd"`, `6:16 missing required field "id"`, `5:19 "up" is not one of in, out`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "outbound:\n  - name: guard\n"
			if tc.config != "" {
				src += "    config: " + tc.config + "\n"
			}
			cf, err := ParseChain("c.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			fs := ValidateChain(cf, cat)
			if len(fs) != len(tc.want) {
				t.Fatalf("got %d findings, want %d:\n%v", len(fs), len(tc.want), fs)
			}
			for _, w := range tc.want {
				at, parts, _ := strings.Cut(w, " ")
				found := false
				for _, f := range fs {
					s := f.String()
					ok := f.Rule == "P6" && strings.HasPrefix(s, "c.yaml:"+at+":")
					for p := range strings.SplitSeq(parts, "|") {
						ok = ok && strings.Contains(s, p)
					}
					found = found || ok
				}
				if !found {
					t.Errorf("no finding at %s with %q in:\n%v", at, parts, fs)
				}
			}
		})
	}
}
