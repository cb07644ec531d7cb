package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/abkit/abkit/internal/limits"
	"reflect"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
)

// File is the form of a catalog file: the same shape `abctl catalog list -o
// json` prints, so a listing can be saved and read back.
type File struct {
	Plugins []Descriptor `json:"plugins"`
}

type fileSource struct {
	spec, path string
}

func (s *fileSource) Spec() string { return s.spec }

func (s *fileSource) Load(ctx context.Context) ([]Descriptor, []Note, error) {
	data, err := limits.ReadFile(s.path, "catalog file size", limits.CatalogFile, "split the catalog into several file: sources")
	if err != nil {
		return nil, nil, &ReadError{Source: s.spec, Err: err}
	}
	var f File
	if err := DecodeStrict(s.path, data, &f); err != nil {
		return nil, nil, &ReadError{Source: s.spec, Err: err}
	}
	for i := range f.Plugins {
		// Whatever origin a saved listing carried, this copy comes from
		// the file, named as the operator named it.
		f.Plugins[i].Origin = Origin{Kind: OriginFile, Source: s.spec, Path: s.path}
	}
	return f.Plugins, nil, nil
}

// DecodeStrict decodes YAML or JSON data (JSON is YAML) into v, rejecting
// unknown fields and duplicate keys. Errors read "name:line:column: what".
// A document that is a JSON object is decoded with encoding/json, several
// times faster than the YAML decoder, with the same errors.
//
// A document over limits.CatalogFile, or whose structure is hostile (deep
// nesting, an alias bomb), is refused with a *limits.Error before it is
// decoded.
func DecodeStrict(name string, data []byte, v any) error {
	if int64(len(data)) > limits.CatalogFile.Max() {
		return limits.CatalogFile.Error(name, "YAML document size", int64(len(data)), "split the document")
	}
	var syntax *json.SyntaxError
	if looksJSON(data) {
		err := decodeJSON(data, v)
		if !errors.Is(err, errNotJSON) && !errors.As(err, &syntax) {
			return err
		}
		// The YAML path decides: start again from the zero value.
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
			rv.Elem().SetZero()
		}
	}
	err := decodeYAML(name, data, v)
	if err != nil && syntax != nil {
		// Neither JSON nor YAML: the JSON syntax error says more for a
		// document that starts as JSON.
		return syntaxError(name, data, syntax)
	}
	return err
}

// decodeYAML is the YAML path of DecodeStrict.
//
// go-yaml panics on some malformed documents (a nil node under an empty
// tag, "outbound:\n  ! 0\n0:0:", found by FuzzParseChain); such a panic
// is the document's fault, so it becomes an error naming the file rather
// than a crash of abctl.
func decodeYAML(name string, data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PosError{File: name, Msg: fmt.Sprintf("the YAML decoder cannot read this document (%v); check its indentation and tags (!name)", r)}
		}
	}()
	if err := limits.CheckYAML(name, data); err != nil {
		return err
	}
	err = yaml.UnmarshalWithOptions(data, v, yaml.Strict())
	if err == nil {
		return nil
	}
	return positioned(name, data, reflect.TypeOf(v), err)
}

// PosError is a decoding error at a place in a file.
type PosError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *PosError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

func positioned(name string, data []byte, t reflect.Type, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		pe := &PosError{File: name, Msg: ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			pe.Line, pe.Col = tk.Position.Line, tk.Position.Column
			pe.Msg = explain(pe.Msg, pathAt(data, pe.Line, pe.Col), t)
		}
		return pe
	}
	return &PosError{File: name, Msg: err.Error()}
}

var (
	unknownFieldMsg = regexp.MustCompile(`^unknown field "([^"]*)"`)
	goTypeMsg       = regexp.MustCompile(`^cannot unmarshal (\S+) into Go (?:struct field|value) \S* ?of type (\S+)`)
)

// explain rewrites a decoder message for an operator: it names the field
// at path (such as "$.inbound[0].on_error") and says what to do. For an
// unknown key that is the known keys at that level and the nearest one;
// for a wrong type, the field and the type wanted instead of Go's names.
func explain(msg, path string, t reflect.Type) string {
	if path == "" {
		return msg
	}
	if m := unknownFieldMsg.FindStringSubmatch(msg); m != nil {
		parent := path[:lastSegment(path)]
		known := jsonFields(typeAt(t, parent))
		out := fmt.Sprintf("unknown field %q", m[1])
		if parent != "$" {
			out += " in " + strings.TrimPrefix(parent, "$.")
		}
		if len(known) == 0 {
			return out
		}
		set := map[string]bool{}
		for _, k := range known {
			set[k] = true
		}
		if n := nearest(m[1], set); n != "no similar name" {
			out += " (" + n + ")"
		}
		return out + "; known fields: " + strings.Join(known, ", ")
	}
	field := strings.TrimPrefix(path, "$.")
	if field == "$" {
		return msg
	}
	if m := goTypeMsg.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s: got a %s, want %s", field, m[1], m[2])
	}
	return field + ": " + msg
}

// lastSegment returns the index where path's last ".key" or "[i]" starts.
func lastSegment(path string) int {
	i := len(path) - 1
	for i > 0 && path[i] != '.' && path[i] != '[' {
		i--
	}
	return i
}

// typeAt follows a YAML path such as "$.inbound[0]" through t by JSON
// field names; it returns nil where the path leaves the type.
func typeAt(t reflect.Type, path string) reflect.Type {
	rest := strings.TrimPrefix(path, "$")
	for t != nil {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if rest == "" {
			return t
		}
		if rest[0] == '[' {
			j := strings.IndexByte(rest, ']')
			if j < 0 || (t.Kind() != reflect.Slice && t.Kind() != reflect.Array) {
				return nil
			}
			t, rest = t.Elem(), rest[j+1:]
			continue
		}
		rest = rest[1:]
		j := strings.IndexAny(rest, ".[")
		if j < 0 {
			j = len(rest)
		}
		key := rest[:j]
		rest = rest[j:]
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByJSON(t, key)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	return nil
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	n, _, _ := strings.Cut(tag, ",")
	if n == "-" || !f.IsExported() {
		return ""
	}
	if n == "" {
		return f.Name
	}
	return n
}

func fieldByJSON(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); jsonName(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// jsonFields lists a struct type's JSON field names in declaration order.
func jsonFields(t reflect.Type) []string {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if n := jsonName(t.Field(i)); n != "" {
			out = append(out, n)
		}
	}
	return out
}
