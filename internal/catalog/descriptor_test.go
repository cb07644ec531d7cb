package catalog

import (
	"slices"
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
