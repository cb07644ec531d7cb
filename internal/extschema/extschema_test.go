package extschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/extschema"
)

const schema = `{"type":"object","required":["model"],"properties":{"model":{"type":"string"},"tokens":{"type":"integer"}}}`

func TestValidate_X1(t *testing.T) {
	s, err := extschema.Compile("p", "inference", json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		Model  string `json:"model"`
		Tokens int    `json:"tokens"`
	}
	if err := s.Validate(res{Model: "m", Tokens: 3}); err != nil {
		t.Errorf("valid struct: %v", err)
	}
	if err := s.Validate(map[string]any{"model": "m", "tokens": float64(3)}); err != nil {
		t.Errorf("valid decoded map: %v", err)
	}
	err = s.Validate(map[string]any{"model": 7, "tokens": 1.5})
	if err == nil || !strings.Contains(err.Error(), "at /model") || !strings.Contains(err.Error(), "at /tokens") || strings.Contains(err.Error(), "\n") {
		t.Errorf("invalid value: %v; want one line naming /model and /tokens", err)
	}
	var nilSchema *extschema.Schema
	if err := nilSchema.Validate(1); err != nil {
		t.Errorf("nil schema: %v", err)
	}
}

func TestCompile_Errors(t *testing.T) {
	for _, tc := range []struct{ name, schema, want string }{
		{"not json", `{`, "not JSON"},
		{"bad type", `{"type":"strin"}`, "does not compile"},
		{"external ref", `{"$ref":"file:///etc/passwd"}`, "self-contained"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := extschema.Compile("p", "k", json.RawMessage(tc.schema))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Compile(%s) = %v, want %q", tc.schema, err, tc.want)
			}
		})
	}
	if s, err := extschema.Compile("p", "k", nil); s != nil || err != nil {
		t.Errorf("empty schema: %v %v", s, err)
	}
}
