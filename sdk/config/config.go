// Package config decodes a plugin's configuration block strictly, against
// the [gateway.ConfigSchema] the plugin publishes ([P6]): an unknown field, a
// wrong type, a missing required field or trailing data is an error that
// names the plugin and the field, and lists the fields the plugin knows.
//
// [Factory] is the usual entry point: it makes a plugin's gateway.Factory
// from its schema and a constructor taking the decoded config struct, so
// the host's config block, the schema conformance probes (P6) and the
// struct the plugin reads cannot disagree. [CheckSchema], in a test, keeps
// the schema and the struct's JSON fields in step.
//
// [P6]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/abkit/abkit/sdk/gateway"
)

// Decode decodes raw into dst, which holds the defaults, checking it against
// schema. A nil, empty or JSON null raw leaves dst as it is, unless schema
// has a required field. plugin names the plugin in errors.
func Decode(plugin string, schema *gateway.ConfigSchema, raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		if req := requiredNames(schema); len(req) > 0 {
			return fmt.Errorf("%s config: missing required field %q; give a config block with %s", plugin, req[0], strings.Join(req, ", "))
		}
		return nil
	}
	if raw[0] != '{' {
		return fmt.Errorf("%s config: want a JSON object with fields %s", plugin, knownNames(schema))
	}
	// Required fields are checked on the raw keys, so that an explicit zero
	// value counts as given.
	var keys map[string]json.RawMessage
	kd := json.NewDecoder(bytes.NewReader(raw))
	if err := kd.Decode(&keys); err != nil {
		return fmt.Errorf("%s config: %w", plugin, err)
	}
	if _, err := kd.Token(); err != io.EOF {
		return fmt.Errorf("%s config: unexpected data after the config object; give one JSON object", plugin)
	}
	for _, name := range requiredNames(schema) {
		if _, ok := keys[name]; !ok {
			return fmt.Errorf("%s config: missing required field %q", plugin, name)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("%s config: %s", plugin, explain(err, schema))
	}
	return nil
}

// explain turns a decoding error into one that names the field and the fix.
func explain(err error, schema *gateway.ConfigSchema) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := te.Type.Kind().String()
		if f, ok := field(schema, te.Field); ok {
			want = f.Type
		}
		return fmt.Sprintf("field %q: want %s, got JSON %s", te.Field, want, te.Value)
	}
	// encoding/json reports unknown fields only in its message text.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Sprintf("unknown field %s; known fields: %s", name, knownNames(schema))
	}
	return err.Error()
}

func field(schema *gateway.ConfigSchema, path string) (gateway.Field, bool) {
	if schema == nil {
		return gateway.Field{}, false
	}
	fields := schema.Fields
	var f gateway.Field
	for part := range strings.SplitSeq(path, ".") {
		found := false
		for _, c := range fields {
			if c.Name == part {
				f, fields, found = c, c.Fields, true
				break
			}
		}
		if !found {
			return gateway.Field{}, false
		}
	}
	return f, true
}

func requiredNames(schema *gateway.ConfigSchema) []string {
	if schema == nil {
		return nil
	}
	var out []string
	for _, f := range schema.Fields {
		if f.Required {
			out = append(out, f.Name)
		}
	}
	return out
}

func knownNames(schema *gateway.ConfigSchema) string {
	if schema == nil || len(schema.Fields) == 0 {
		return "(none)"
	}
	names := make([]string, len(schema.Fields))
	for i, f := range schema.Fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// Duration parses a duration field's value ("30s", "1m"); the error names
// the plugin and the field. The empty string gives def.
func Duration(plugin, field, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s config: field %q: %q is not a duration; write it like \"30s\" or \"1m\"", plugin, field, s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s config: field %q: %s is not positive", plugin, field, s)
	}
	return d, nil
}

// CheckSchema reports how schema and the JSON fields of the struct that cfg
// points to disagree: every schema field must be a struct field and the
// other way round. Tests use it so that a schema cannot drift from the code.
func CheckSchema(schema *gateway.ConfigSchema, cfg any) error {
	t := reflect.TypeOf(cfg)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("config type %s is not a struct", t)
	}
	inStruct := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		inStruct[name] = true
	}
	var errs []error
	inSchema := map[string]bool{}
	for _, f := range schema.Fields {
		inSchema[f.Name] = true
		if !inStruct[f.Name] {
			errs = append(errs, fmt.Errorf("schema field %q has no struct field", f.Name))
		}
		if err := gateway.CheckDescription(f.Description); err != nil {
			errs = append(errs, fmt.Errorf("schema field %q: %w", f.Name, err))
		}
	}
	for name := range inStruct {
		if !inSchema[name] {
			errs = append(errs, fmt.Errorf("struct field %q is missing from the schema", name))
		}
	}
	return errors.Join(errs...)
}

// Factory returns the factory of a plugin configured by a C: an entry's
// config block is decoded with Decode against schema into a zero C (so a
// plugin's defaults are applied by newPlugin), then handed to newPlugin.
func Factory[C any, P gateway.Plugin](name string, schema *gateway.ConfigSchema, newPlugin func(C) (P, error)) gateway.Factory {
	return gateway.Factory{
		Name:   name,
		Config: schema,
		New: func(raw json.RawMessage) (gateway.Plugin, error) {
			var c C
			if err := Decode(name, schema, raw, &c); err != nil {
				return nil, err
			}
			p, err := newPlugin(c)
			if err != nil {
				return nil, err // not a typed nil in a non-nil interface
			}
			return p, nil
		},
	}
}
