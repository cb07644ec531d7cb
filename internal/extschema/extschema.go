// Package extschema compiles the JSON Schemas plugins declare for their
// exchange extensions (gateway.ExtensionSpec) and validates values against
// them. The pipeline runtime checks every value a declaring writer stores
// ([X1]); the catalog's lint and the conformance suite check that a declared
// schema compiles.
//
// Validation is github.com/santhosh-tekuri/jsonschema/v6's; schemas may not
// load anything from outside themselves (no file or network $ref).
//
// [X1]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package extschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled extension schema.
type Schema struct{ s *jsonschema.Schema }

// noLoader refuses every external reference: a plugin's schema is
// self-contained, and the host must not read files or the network for it.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema refers to %s; extension schemas must be self-contained", url)
}

// Compile compiles the schema plugin declares for extension key. An empty
// schema compiles to nil: nothing to check.
func Compile(plugin, key string, schema json.RawMessage) (*Schema, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("extension %q: schema is not JSON: %w", key, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	url := "abkit:///" + plugin + "/extensions/" + key + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("extension %q: schema: %w", key, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("extension %q: schema does not compile: %s", key, oneLine(err.Error()))
	}
	return &Schema{s: s}, nil
}

// Validate checks v, an extension value as a plugin stored it (any value
// that marshals to JSON), against s. The error says where the value is
// wrong, in one line.
func (s *Schema) Validate(v any) error {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("value does not marshal to JSON: %w", err)
	}
	return s.ValidateJSON(b)
}

// Decoded is an extension value marshalled to JSON and decoded back
// (numbers as written) once, for both validation and the trace, which
// each did it on their own.
type Decoded struct {
	JSON []byte
	Doc  any
	err  error // from marshalling or decoding, worded as Validate words it
}

// Decode marshals v and decodes the JSON back.
func Decode(v any) Decoded {
	b, err := json.Marshal(v)
	if err != nil {
		return Decoded{err: fmt.Errorf("value does not marshal to JSON: %w", err)}
	}
	if doc, ok := decodeJSON(b); ok {
		return Decoded{JSON: b, Doc: doc}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return Decoded{JSON: b, err: fmt.Errorf("value is not JSON: %w", err)}
	}
	return Decoded{JSON: b, Doc: doc}
}

// Canonical returns json.Marshal(d.Doc): the decoded value with its
// object keys sorted and its numbers as written, the form the trace
// shows. It is nil when d holds an error.
func (d Decoded) Canonical() ([]byte, error) {
	if d.err != nil {
		return nil, d.err
	}
	if b, ok := appendCanonical(make([]byte, 0, len(d.JSON)+len(d.JSON)/8), d.Doc); ok {
		return b, nil
	}
	return json.Marshal(d.Doc)
}

// Err is the marshalling or decoding error, nil when Doc is the value.
func (d Decoded) Err() error { return d.err }

// ValidateDecoded is Validate for a value Decode took apart.
func (s *Schema) ValidateDecoded(d Decoded) error {
	if s == nil {
		return nil
	}
	if d.err != nil {
		return d.err
	}
	return s.validate(d.Doc)
}

// ValidateJSON checks a JSON document against s.
func (s *Schema) ValidateJSON(b []byte) error {
	if s == nil {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("value is not JSON: %w", err)
	}
	return s.validate(doc)
}

// validate checks a decoded document against s.
func (s *Schema) validate(doc any) error {
	err := s.s.Validate(doc)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(describe(ve))
	}
	return err
}

// describe lists the leaf causes of a validation error as "at /path: why",
// sorted and joined with "; ".
func describe(ve *jsonschema.ValidationError) string {
	p := message.NewPrinter(language.English)
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(e.InstanceLocation, "/")
			out = append(out, fmt.Sprintf("at %s: %s", at, e.ErrorKind.LocalizedString(p)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	if len(out) > 4 {
		out = append(out[:4], fmt.Sprintf("and %d more", len(out)-4))
	}
	return strings.Join(out, "; ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
