package sse

import (
	"reflect"
	"strings"
	"testing"
)

// TestParse checks the WHATWG field rules Parse applies to one block (P19).
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Event
	}{
		{"empty", "", Event{}},
		{"blank line only", "\n", Event{}},
		{"single data", "data: hello\n\n", Event{Data: "hello", HasData: true}},
		{"multi-line data joined with LF", "data: a\ndata: b\ndata: c\n\n", Event{Data: "a\nb\nc", HasData: true}},
		{"data without colon", "data\n\n", Event{Data: "", HasData: true}},
		{"data empty lines", "data\ndata\n\n", Event{Data: "\n", HasData: true}},
		{"only one leading space removed", "data:  two\n\n", Event{Data: " two", HasData: true}},
		{"no space after colon", "data:x\n\n", Event{Data: "x", HasData: true}},
		{"tab is not removed", "data:\tx\n\n", Event{Data: "\tx", HasData: true}},
		{"trailing space kept", "data: x \n\n", Event{Data: "x ", HasData: true}},
		{"split at first colon", "data: a:b: c\n\n", Event{Data: "a:b: c", HasData: true}},
		{"JSON data", "data: {\"a\":1}\n\n", Event{Data: "{\"a\":1}", HasData: true}},
		{"event type", "event: ping\ndata: 1\n\n", Event{Event: "ping", Data: "1", HasData: true}},
		{"last event wins", "event: a\nevent: b\n\n", Event{Event: "b"}},
		{"id", "id: 42\n\n", Event{ID: "42", HasID: true}},
		{"empty id is valid", "id\n\n", Event{ID: "", HasID: true}},
		{"id with NUL ignored", "id: a\x00b\n\n", Event{}},
		{"id with NUL keeps earlier id", "id: 1\nid: 2\x00\n\n", Event{ID: "1", HasID: true}},
		{"retry", "retry: 1500\n\n", Event{Retry: 1500, HasRetry: true}},
		{"retry zero", "retry: 0\n\n", Event{Retry: 0, HasRetry: true}},
		{"retry not digits", "retry: 15a\n\n", Event{}},
		{"retry negative", "retry: -1\n\n", Event{}},
		{"retry empty", "retry:\n\n", Event{}},
		{"retry extra space", "retry:  10\n\n", Event{}},
		{"retry overflow", "retry: 99999999999999999999999\n\n", Event{}},
		{"invalid retry keeps earlier", "retry: 5\nretry: x\n\n", Event{Retry: 5, HasRetry: true}},
		{"comments", ": hello\n:x\n:\n:  two\n\n", Event{Comments: []string{"hello", "x", "", " two"}}},
		{"unknown fields ignored", "foo: bar\nDATA: x\ndata : y\n\n", Event{}},
		{"CR line ends", "data: a\rdata: b\r\r", Event{Data: "a\nb", HasData: true}},
		{"CRLF line ends", "data: a\r\nid: 7\r\n\r\n", Event{Data: "a", HasData: true, ID: "7", HasID: true}},
		{"stops at the blank line", "data: a\n\ndata: b\n\n", Event{Data: "a", HasData: true}},
		{"unterminated final line", "event: e\ndata: a", Event{Event: "e", Data: "a", HasData: true}},
		{"leading BOM skipped", bomS + "data: x\n\n", Event{Data: "x", HasData: true}},
		{"second BOM is content", bomS + bomS + "data: x\n\n", Event{}},
		{"BOM-only line at block end", bomS + "\n", Event{}},
		{"BOM line of a later block", bomS + "\ndata: x\n\n", Event{Data: "x", HasData: true}},
		{"BOM CRLF line of a later block", bomS + "\r\ndata\r\n\r\n", Event{HasData: true}},
		{"blank line after BOM line still ends", bomS + "\n\ndata: x\n\n", Event{}},
		{"everything", ": c\nevent: delta\nid: 9\nretry: 30\ndata: {}\n\n",
			Event{ID: "9", HasID: true, Event: "delta", Data: "{}", HasData: true, Retry: 30, HasRetry: true, Comments: []string{"c"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse([]byte(tc.raw)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.raw, got, tc.want)
			}
		})
	}
}

// TestParseFramerAgree checks that every block of the framing table has
// HasData exactly when the Framer called it a frame (P19). The one allowed
// difference: a non-frame that is not the first block yet starts with a BOM
// may parse with data, since the Framer strips the BOM only at the start of
// the stream and Parse cannot know the block's position.
func TestParseFramerAgree(t *testing.T) {
	for _, tc := range framerCases() {
		for i, b := range tc.want {
			if tc.unterm > 0 && i == len(tc.want)-1 {
				continue // an unterminated block is never a frame, whatever it holds
			}
			if !b.frame && i > 0 && strings.HasPrefix(b.raw, bomS) {
				continue
			}
			if got := Parse([]byte(b.raw)).HasData; got != b.frame {
				t.Errorf("%s: block %d %q: Parse HasData=%v, Framer isFrame=%v", tc.name, i, b.raw, got, b.frame)
			}
		}
	}
}
