package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

func TestConfigLines(t *testing.T) {
	tests := []struct {
		name   string
		fields []gateway.Field
		want   []string
	}{
		{name: "none", fields: nil, want: nil},
		{
			name:   "bare field",
			fields: []gateway.Field{{Name: "target", Type: "string"}},
			want:   []string{"target string"},
		},
		{
			name: "every attribute",
			fields: []gateway.Field{{Name: "mode", Type: "string", Required: true, Default: "strict",
				Enum: []string{"lax", "strict"}, Description: "How hard to check"}},
			want: []string{"mode string required default=strict enum=lax|strict — How hard to check"},
		},
		{
			name: "nested fields under dotted names",
			fields: []gateway.Field{
				{Name: "limits", Type: "object", Fields: []gateway.Field{
					{Name: "rps", Type: "number", Default: 5.5},
					{Name: "window", Type: "object", Fields: []gateway.Field{{Name: "size", Type: "duration"}}},
				}},
				{Name: "on", Type: "boolean", Default: false},
			},
			want: []string{"limits object", "limits.rps number default=5.5", "limits.window object", "limits.window.size duration", "on boolean default=false"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ConfigLines(tc.fields); !slices.Equal(got, tc.want) {
				t.Errorf("ConfigLines() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBodyWords: the short and long names of the body capabilities come
// from one list, in one order.
func TestBodyWords(t *testing.T) {
	c := &Capabilities{ReadsBody: true, WritesResponseBody: true}
	if got := strings.Join(c.BodyWords(), ","); got != "reads,writes-resp" {
		t.Errorf("BodyWords %q", got)
	}
	if got := strings.Join(c.BodyPhrases(), ","); got != "reads body,writes response body" {
		t.Errorf("BodyPhrases %q", got)
	}
	if none := (&Capabilities{}).BodyWords(); none != nil {
		t.Errorf("no body capability: %q, want none", none)
	}
}
