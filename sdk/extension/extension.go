// Package extension reads an extension value back as its Go type.
//
// An extension is stored by one plugin with Exchange.SetExtension and read
// by later ones. In process the reader sees the writer's own value (a
// struct, a pointer to one); after the value has crossed a process
// boundary it is whatever JSON decoding made of it (a map[string]any,
// []any, float64 …), because extensions travel as JSON. [Get] and [Decode]
// accept both, so the same reader works in and out of process. Store plain
// JSON-shaped structs (exported fields with json tags, no channels or
// funcs), so that the JSON form decodes back into the same value.
package extension

import (
	"encoding/json"
	"fmt"

	"github.com/abkit/abkit/sdk/gateway"
)

// Get returns the extension stored under key as a T. It is false when the
// extension is absent or null, or does not decode into a T (use [Decode]
// to learn why).
func Get[T any](ex *gateway.Exchange, key string) (T, bool) {
	v, ok := ex.Extension(key)
	if !ok || v == nil {
		var zero T
		return zero, false
	}
	t, err := Decode[T](v)
	return t, err == nil
}

// Decode converts an extension value v into a T: a T or a non-nil *T is
// returned as it is; anything else goes through JSON, as it would across
// a process boundary. The error says what did not fit.
func Decode[T any](v any) (T, error) {
	var zero T
	switch x := v.(type) {
	case T:
		return x, nil
	case *T:
		if x == nil {
			return zero, fmt.Errorf("extension value is a nil %T", x)
		}
		return *x, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return zero, fmt.Errorf("extension value %T is not JSON: %w", v, err)
	}
	var t T
	if err := json.Unmarshal(b, &t); err != nil {
		return zero, fmt.Errorf("extension value does not decode into %T: %w", t, err)
	}
	return t, nil
}
