// Package extval reads a parser's extension back as its Go type. In process
// the value is the parser's own struct; after crossing a process boundary it
// is whatever JSON decoding made of it (a map), so both are accepted.
package extval

import (
	"encoding/json"

	"github.com/abkit/abkit/sdk/gateway"
)

// Get returns the extension stored under key as a T.
func Get[T any](ex *gateway.Exchange, key string) (T, bool) {
	var zero T
	v, ok := ex.Extension(key)
	if !ok || v == nil {
		return zero, false
	}
	switch x := v.(type) {
	case T:
		return x, true
	case *T:
		if x == nil {
			return zero, false
		}
		return *x, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return zero, false
	}
	var t T
	if err := json.Unmarshal(b, &t); err != nil {
		return zero, false
	}
	return t, true
}
