package jsonrpc

import (
	"bytes"
	"errors"
	"testing"
)

// TestParseFastPath: the shortcut for objects that cannot hold a JSON-RPC
// message answers as decoding would, including for keys encoding/json
// matches in another case or spelled with escapes.
func TestParseFastPath(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		msgs     int
		err      error // nil, ErrNotJSONRPC, or errSyntax for any other error
	}{
		{"inference delta", `{"choices":[{"index":0,"delta":{"content":" w1"}}]}`, 0, ErrNotJSONRPC},
		{"value named method", `{"note":"method"}`, 0, ErrNotJSONRPC},
		{"invalid", `{"choices":[`, 0, errSyntax},
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, 1, nil},
		{"upper-case key", `{"Method":"tools/list"}`, 1, nil},
		{"shouted result", `{"id":1,"RESULT":{}}`, 1, nil},
		{"escaped key", `{"id":1,"\u0072esult":{}}`, 1, nil},
		{"kelvin-free fold", `{"id":1,"ERROR":{"code":1,"message":"x"}}`, 1, nil},
		{"long s folds to s", "{\"id\":1,\"re\u017fult\":{}}", 1, nil},
		{"batch", `[{"id":1,"result":{}},{"id":2,"result":{}}]`, 2, nil},
		{"number", `7`, 0, errSyntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := Parse([]byte(tc.in))
			switch {
			case tc.err == errSyntax:
				if err == nil || errors.Is(err, ErrNotJSONRPC) {
					t.Errorf("err = %v, want a decoding error", err)
				}
			case !errors.Is(err, tc.err) && err != tc.err:
				t.Errorf("err = %v, want %v", err, tc.err)
			}
			if len(msgs) != tc.msgs {
				t.Errorf("%d messages, want %d", len(msgs), tc.msgs)
			}
		})
	}
}

var errSyntax = errors.New("any decoding error")

// TestA2AResultShortcut: the key scan that spares the decode answers as
// the decode does, also for keys spelled with escapes or in another case
// (the probe matches keys exactly, so "Kind" is not "kind").
func TestA2AResultShortcut(t *testing.T) {
	for _, in := range []string{
		`{"choices":[{"index":0,"delta":{"content":" w1"}}]}`,
		`{"kind":"task","id":"t1"}`, `{"kind":"other"}`, `{"Kind":"task"}`,
		`{"\u006bind":"task"}`, `{"task":{"id":"t"}}`, `{"statusUpdate":{}}`,
		`{"artifactUpdate":{}}`, `{"msg":{}}`, `{"message":{}}`, `{"message":{},"x":1}`,
		`{"note":"kind"}`, `{"a":{"kind":"task"}}`, `{"kind":"task"`, `{"message":"text"}`,
	} {
		if got, want := A2AResult([]byte(in)), a2aShape([]byte(in)); got != want {
			t.Errorf("A2AResult(%s) = %v, the decode says %v", in, got, want)
		}
	}
}

// TestV2: only "jsonrpc":"2.0" marks a message as JSON-RPC 2.0; an
// inference error chunk with an id and an error object parses (it has the
// members) but carries no envelope.
func TestV2(t *testing.T) {
	for in, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                 true,
		`{"jsonrpc": "2.0", "method":"notifications/x"}`:       true,
		`{"id":"gen-1","error":{"code":429,"message":"slow"}}`: false,
		`{"jsonrpc":"1.0","id":1,"result":{}}`:                 false,
		`{"jsonrpc":2,"id":1,"result":{}}`:                     false,
		`{"jsonrpc":null,"id":1,"result":{}}`:                  false,
	} {
		msgs, err := Parse([]byte(in))
		if err != nil || len(msgs) != 1 || msgs[0].V2() != want {
			t.Errorf("%s: %+v, %v; want V2 %v", in, msgs, err, want)
		}
	}
}

// TestV2Only: only the messages with "jsonrpc":"2.0" are kept, in order.
func TestV2Only(t *testing.T) {
	msgs, err := Parse([]byte(`[{"jsonrpc":"2.0","id":1,"result":{}},{"id":2,"error":{"code":1,"message":"x"}},{"jsonrpc":"2.0","method":"ping"}]`))
	if err != nil {
		t.Fatal(err)
	}
	got := V2Only(msgs)
	if len(got) != 2 || string(got[0].ID) != "1" || got[1].Method != "ping" {
		t.Fatalf("V2Only kept %+v; want the two 2.0 messages, id 1 then ping", got)
	}
	if len(V2Only(nil)) != 0 {
		t.Fatal("V2Only(nil) is not empty")
	}
}

// mayHoldMessageRef is mayHoldMessage as first written, one byte at a
// time: the reference FuzzMayHoldMessage holds the faster one to.
func mayHoldMessageRef(data []byte) bool {
	if len(data) == 0 || data[0] != '{' {
		return true
	}
	for i, c := range data {
		switch {
		case c >= 0x80 || c == '\\':
			return true
		case c == '"':
			rest := data[i+1:]
			for _, k := range [...]string{"method", "result", "error"} {
				if len(rest) > len(k) && rest[len(k)] == '"' && bytes.EqualFold(rest[:len(k)], []byte(k)) {
					return true
				}
			}
		}
	}
	return false
}

// FuzzMayHoldMessage: the scan answers as the byte-at-a-time reference.
func FuzzMayHoldMessage(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":" w1"}}]}`, `{"note":"method"}`, `{"Method":1}`,
		`{"a":"é"}`, `{"a":"x\"result\""}`, `{"id":1,"RESULT":{}}`, `{"x":"error`, `{"error"`, `{"error":`,
		"{\"a\":\"01234567\x80\"}", `{}`, `{"`, `[1]`, ``, `{"resulT"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := mayHoldMessage(data), mayHoldMessageRef(data); got != want {
			t.Fatalf("mayHoldMessage(%q) = %v, want %v", data, got, want)
		}
	})
}
