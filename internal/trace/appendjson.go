package trace

import (
	"encoding/json"
	"strconv"
)

// AppendJSON appends e's JSON form to b: byte for byte what json.Marshal
// writes for it (field order, omitempty, HTML-safe escaping), without
// reflection or allocation in the common case. Golden traces are compared
// and written event by event through it (internal/replay), so their
// format is json.Marshal's; TestAppendJSONMatchesMarshal and FuzzAppendJSON
// hold it to that.
func (e *Event) AppendJSON(b []byte) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, int64(e.Seq), 10)
	b = append(b, `,"family":`...)
	b = appendString(b, string(e.Family))
	if e.Direction != "" {
		b = append(b, `,"direction":`...)
		b = appendString(b, e.Direction)
	}
	b = append(b, `,"hook":`...)
	b = appendString(b, e.Hook)
	b = append(b, `,"plugin":`...)
	b = appendString(b, e.Plugin)
	if e.Frame != nil {
		b = append(b, `,"frame":`...)
		b = strconv.AppendInt(b, int64(*e.Frame), 10)
	}
	if e.Last {
		b = append(b, `,"last":true`...)
	}
	b = append(b, `,"action":`...)
	b = appendString(b, e.Action)
	if e.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendString(b, e.Reason)
	}
	if e.Status != 0 {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(e.Status), 10)
	}
	if e.Mutated != "" {
		b = append(b, `,"mutated":`...)
		b = appendString(b, e.Mutated)
	}
	if e.Shadow {
		b = append(b, `,"shadow":true`...)
	}
	if e.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, e.Error)
	}
	if e.Phase != "" {
		b = append(b, `,"phase":`...)
		b = appendString(b, e.Phase)
	}
	if len(e.Headers) > 0 {
		b = appendMarshal(b, `,"headers":`, e.Headers)
	}
	if e.Rejection != nil {
		b = appendMarshal(b, `,"rejection":`, e.Rejection)
	}
	if len(e.Extensions) > 0 {
		// Rare, and values are arbitrary JSON: json.Marshal keeps the
		// form exactly its own.
		if x, err := json.Marshal(e.Extensions); err == nil {
			b = append(b, `,"extensions":`...)
			b = append(b, x...)
		}
	}
	b = append(b, `,"duration_ns":`...)
	b = strconv.AppendInt(b, e.DurationNS, 10)
	return append(b, '}')
}

// appendMarshal appends key and v through json.Marshal: header changes and
// rejections are rare, so they take the reflective path.
func appendMarshal(b []byte, key string, v any) []byte {
	m, err := json.Marshal(v)
	if err != nil { // the types here always marshal
		return b
	}
	b = append(b, key...)
	return append(b, m...)
}

// appendString appends s as a JSON string the way json.Marshal does.
// Printable ASCII other than the characters it escapes is copied as it is;
// anything else goes through json.Marshal itself.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			q, err := json.Marshal(s)
			if err != nil { // cannot happen for a string; keep the form valid
				return strconv.AppendQuote(b, s)
			}
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainByte marks the bytes json.Marshal copies into a string as they are:
// printable ASCII except the quote, the backslash and the HTML characters
// it escapes.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()
