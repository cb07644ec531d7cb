package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"

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
	data, err := os.ReadFile(s.path)
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
func DecodeStrict(name string, data []byte, v any) error {
	err := yaml.UnmarshalWithOptions(data, v, yaml.Strict())
	if err == nil {
		return nil
	}
	return positioned(name, err)
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

func positioned(name string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		pe := &PosError{File: name, Msg: ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			pe.Line, pe.Col = tk.Position.Line, tk.Position.Column
		}
		return pe
	}
	return &PosError{File: name, Msg: err.Error()}
}
