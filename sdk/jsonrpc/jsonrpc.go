// Package jsonrpc reads JSON-RPC 2.0 messages, single or batched, as MCP
// and A2A plugins see them in bodies and SSE events. Everything it returns
// is copied out of the input, which may be a borrowed frame ([P24]).
//
// [P24]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
)

// Message is one JSON-RPC message: a request (ID and Method), a
// notification (Method only) or a response (ID and Result or Error).
type Message struct {
	// JSONRPC2 says the message has "jsonrpc":"2.0", the only evidence a
	// message carries of being JSON-RPC at all (an inference chunk may
	// have an id and an error object too).
	JSONRPC2 bool
	// ID is the id's JSON text (1, "abc"); empty for a notification.
	ID     string
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// IsResponse reports whether m answers a request.
func (m Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// V2 reports whether m carries the JSON-RPC 2.0 envelope ("jsonrpc":"2.0").
func (m Message) V2() bool { return m.JSONRPC2 }

// version reads the "jsonrpc" member without keeping it: decoding it to a
// string cost an allocation per message.
type version bool

// UnmarshalJSON sets v when the member is the string "2.0".
func (v *version) UnmarshalJSON(b []byte) error {
	*v = string(b) == `"2.0"`
	return nil
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// ErrNotJSONRPC says the data is JSON but holds no JSON-RPC message.
var ErrNotJSONRPC = errors.New("not a JSON-RPC message")

// Parse reads one message or a batch. It fails on invalid JSON and returns
// ErrNotJSONRPC when no element looks like JSON-RPC (no method, result or
// error).
func Parse(data []byte) ([]Message, error) {
	data = bytes.TrimSpace(data)
	if !mayHoldMessage(data) {
		// The common case on a stream that is not JSON-RPC (an inference
		// stream through the MCP and A2A parsers): json.Valid is several
		// times cheaper than decoding, and the answer is the same.
		if json.Valid(data) {
			return nil, ErrNotJSONRPC
		}
	}
	var raws []json.RawMessage
	if len(data) > 0 && data[0] == '[' {
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, err
		}
	} else {
		raws = []json.RawMessage{data}
	}
	var out []Message
	for _, raw := range raws {
		var w struct {
			Version version         `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
			Result  json.RawMessage `json:"result"`
			Error   *Error          `json:"error"`
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, err
		}
		if w.Method == "" && w.Result == nil && w.Error == nil {
			continue
		}
		m := Message{JSONRPC2: bool(w.Version), Method: w.Method, Params: compact(w.Params), Result: compact(w.Result), Error: w.Error}
		if id := compact(w.ID); id != nil && string(id) != "null" {
			m.ID = string(id)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, ErrNotJSONRPC
	}
	return out, nil
}

// V2Only keeps the messages with the JSON-RPC 2.0 envelope, in place (it
// reuses msgs' array). In a response it is the only evidence of a JSON-RPC
// protocol: an OpenAI-compatible chunk or a plain JSON error body may have
// an id and an error object, but never "jsonrpc":"2.0".
func V2Only(msgs []Message) []Message {
	out := msgs[:0]
	for _, m := range msgs {
		if m.V2() {
			out = append(out, m)
		}
	}
	return out
}

// MayHoldMessage reports whether data may decode to a JSON-RPC message;
// when it is false, Parse fails (ErrNotJSONRPC, or a decoding error for
// invalid JSON). A caller that only needs to know that Parse fails can
// skip it, and the JSON check it makes, on such data.
func MayHoldMessage(data []byte) bool { return mayHoldMessage(bytes.TrimSpace(data)) }

// mayHoldMessage reports whether data may decode to a JSON-RPC message.
// False is certain: data is an object whose text holds no string that
// matches "method", "result" or "error" the way encoding/json matches
// field names (ignoring ASCII case), with no escape or non-ASCII byte that
// could spell one in disguise. Such an object decodes with no method,
// result or error, so Parse answers ErrNotJSONRPC when it is valid JSON.
func mayHoldMessage(data []byte) bool {
	if len(data) == 0 || data[0] != '{' {
		return true
	}
	// Three scans at memory speed rather than one switch per byte: the
	// MCP and A2A parsers ask this of every event of every stream.
	if bytes.IndexByte(data, '\\') >= 0 || !ascii(data) {
		return true
	}
	for i := 0; ; {
		k := bytes.IndexByte(data[i:], '"')
		if k < 0 {
			return false
		}
		i += k + 1
		rest := data[i:]
		for _, key := range [...]string{"method", "result", "error"} {
			if len(rest) > len(key) && rest[len(key)] == '"' && bytes.EqualFold(rest[:len(key)], []byte(key)) {
				return true
			}
		}
	}
}

// ascii reports whether data is all ASCII, eight bytes at a time.
func ascii(data []byte) bool {
	for len(data) >= 8 {
		if binary.LittleEndian.Uint64(data)&0x8080808080808080 != 0 {
			return false
		}
		data = data[8:]
	}
	for _, c := range data {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// compact returns raw without insignificant space, so that a value reads
// the same after crossing a process boundary as JSON; nil stays nil.
func compact(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil
	}
	return b.Bytes()
}
