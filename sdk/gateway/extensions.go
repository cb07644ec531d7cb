package gateway

import (
	"bytes"
	"encoding/json"
	"slices"
)

// ExtensionSpec declares one exchange extension a plugin writes or reads
// (Capabilities.Extensions). A parser declares what it writes, with a JSON
// Schema of the value, so that the host can check every value it stores
// and a reader can count on the shape; a reader declares what it reads, so
// that `abctl chain validate` can tell it has no writer before it.
//
// A parser of LLM inference traffic declares:
//
//	Extensions: []gateway.ExtensionSpec{{
//		Key: "inference", Writes: true,
//		Schema: json.RawMessage(`{"type":"object","properties":{"model":{"type":"string"}}}`),
//	}}
//
// and a plugin that acts on it without needing it:
//
//	Extensions: []gateway.ExtensionSpec{{Key: "inference", Reads: true, Optional: true}}
type ExtensionSpec struct {
	// Key is the extension key, as given to Exchange.SetExtension.
	Key string `json:"key"`
	// Writes: the plugin stores values under Key. The host checks each
	// value it stores against Schema (see docs/contracts.md, X1).
	Writes bool `json:"writes,omitempty"`
	// Reads: the plugin reads Key, written by a plugin before it in the
	// chain (X2).
	Reads bool `json:"reads,omitempty"`
	// Optional marks a read the plugin does without: a chain with no writer
	// of Key is not a finding.
	Optional bool `json:"optional,omitempty"`
	// Schema is a JSON Schema (draft 2020-12 unless it names another with
	// $schema) of the value. For a writer the host validates what it
	// writes; for a reader it documents what the reader expects. Empty: no
	// schema.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Description says what the value holds, for the catalog.
	Description string `json:"description,omitempty"`
}

// Writes declares an extension a plugin writes under key, with its JSON
// Schema (compacted, as it crosses a process boundary, so that the
// declaration compares equal wherever it is read) and a description for
// the catalog. A parser typically embeds the schema file and, built on
// sdk/sse, hands the declaration to sse.NewParser:
//
//	//go:embed schema.json
//	var schema []byte
//
//	func Extension() gateway.ExtensionSpec {
//		return gateway.Writes("mcp", schema, "The MCP calls of a request")
//	}
func Writes(key string, schema []byte, description string) ExtensionSpec {
	return ExtensionSpec{Key: key, Writes: true, Schema: json.RawMessage(CompactJSON(schema)), Description: description}
}

// Equal reports whether two declarations are the same (P2). Schemas are
// compared as bytes.
func (s ExtensionSpec) Equal(o ExtensionSpec) bool {
	return s.Key == o.Key && s.Writes == o.Writes && s.Reads == o.Reads && s.Optional == o.Optional &&
		s.Description == o.Description && bytes.Equal(s.Schema, o.Schema)
}

// cloneSpecs copies the declarations for Normalize, each schema compacted
// (as JSON carries it across a process boundary or into a cache) so that
// one declaration compares equal wherever it was read.
func cloneSpecs(in []ExtensionSpec) []ExtensionSpec {
	if in == nil {
		return nil
	}
	out := slices.Clone(in)
	for i := range out {
		out[i].Schema = CompactJSON(out[i].Schema)
	}
	return out
}

// CompactJSON returns a compacted copy of b, or a plain copy when b is not
// valid JSON (a broken schema is reported where it is compiled).
func CompactJSON(b []byte) []byte {
	if b == nil {
		return nil
	}
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		return slices.Clone(b)
	}
	return c.Bytes()
}

// Writer returns the declaration of the extension key the capabilities
// write, if any.
func (c Capabilities) Writer(key string) (ExtensionSpec, bool) {
	for _, s := range c.Extensions {
		if s.Key == key && s.Writes {
			return s, true
		}
	}
	return ExtensionSpec{}, false
}

// DeleteExtension removes the value stored under key, so that later plugins
// (in this process or another) no longer see it. Deleting a key that holds
// nothing does nothing.
func (ex *Exchange) DeleteExtension(key string) {
	if _, ok := ex.extensions[key]; !ok {
		return
	}
	ex.noteExtension(key)
	delete(ex.extensions, key)
}

// ExtensionChange is one extension key a hook call set or deleted, with the
// value the key held before the call's first change of it.
type ExtensionChange struct {
	Key string
	// Prev is the value before the change; HadPrev is false when the key
	// held nothing.
	Prev    any
	HadPrev bool
}

// noteExtension records that key is about to change, keeping its value from
// before the first change since the host last took the record.
func (ex *Exchange) noteExtension(key string) {
	for i := range ex.extChanges {
		if ex.extChanges[i].Key == key {
			return
		}
	}
	prev, had := ex.extensions[key]
	ex.extChanges = append(ex.extChanges, ExtensionChange{Key: key, Prev: prev, HadPrev: had})
}

// TakeExtensionChanges returns the extension keys set or deleted since the
// last call, each once, in the order of their first change, and resets the
// record. The slice is valid until the next hook call: the host reads it
// right away.
func (c *Control) TakeExtensionChanges() []ExtensionChange {
	ch := c.ex.extChanges
	if len(ch) == 0 {
		return nil
	}
	c.ex.extChanges = ch[:0:len(ch)]
	return ch
}

// RestoreExtension puts back the value a change replaced (or removes the
// key if it held nothing before), without recording a change: the host
// refuses a write this way.
func (c *Control) RestoreExtension(ch ExtensionChange) {
	if !ch.HadPrev {
		delete(c.ex.extensions, ch.Key)
		return
	}
	if c.ex.extensions == nil {
		c.ex.extensions = make(map[string]any)
	}
	c.ex.extensions[ch.Key] = ch.Prev
}
