package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestToolEventValidate(t *testing.T) {
	ok := ToolEvent{Phase: PhaseStart, CallID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)}
	tests := []struct {
		name    string
		mutate  func(*ToolEvent)
		wantErr string
	}{
		{"valid start", func(*ToolEvent) {}, ""},
		{"valid result", func(e *ToolEvent) { e.Phase = PhaseResult; e.Result = json.RawMessage(`"done"`); e.IsError = true }, ""},
		{"empty arguments", func(e *ToolEvent) { e.Arguments = nil }, ""},
		{"unknown phase", func(e *ToolEvent) { e.Phase = "middle" }, "phase"},
		{"no call id", func(e *ToolEvent) { e.CallID = " " }, "call_id"},
		{"no name", func(e *ToolEvent) { e.Name = "" }, "name is empty"},
		{"array arguments", func(e *ToolEvent) { e.Arguments = json.RawMessage(`[1]`) }, "arguments"},
		{"broken arguments", func(e *ToolEvent) { e.Arguments = json.RawMessage(`{"a":`) }, "arguments"},
		{"broken result", func(e *ToolEvent) { e.Phase = PhaseResult; e.Result = json.RawMessage(`{`) }, "result is not valid"},
		{"result in start", func(e *ToolEvent) { e.Result = json.RawMessage(`1`) }, "start phase"},
		{"is_error in start", func(e *ToolEvent) { e.IsError = true }, "is_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ok
			tt.mutate(&e)
			err := e.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

// H5: a rewrite sets only the named fields; unknown names and wrong types are
// errors and leave the event unchanged.
func TestWithFieldsH5(t *testing.T) {
	ev := ToolEvent{Phase: PhaseResult, CallID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`), Result: json.RawMessage(`1`)}
	tests := []struct {
		name    string
		fields  map[string]json.RawMessage
		want    ToolEvent
		wantErr string
	}{
		{"name only", map[string]json.RawMessage{"name": json.RawMessage(`"find"`)},
			ToolEvent{Phase: PhaseResult, CallID: "c1", Name: "find", Arguments: json.RawMessage(`{"q":"x"}`), Result: json.RawMessage(`1`)}, ""},
		{"null clears result", map[string]json.RawMessage{"result": json.RawMessage(`null`), "is_error": json.RawMessage(`true`)},
			ToolEvent{Phase: PhaseResult, CallID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`), IsError: true}, ""},
		{"unknown field", map[string]json.RawMessage{"colour": json.RawMessage(`"red"`)}, ev, `"colour": unknown field`},
		{"wrong type", map[string]json.RawMessage{"name": json.RawMessage(`3`)}, ev, `"name": want a JSON string`},
		{"null name", map[string]json.RawMessage{"name": json.RawMessage(`null`)}, ev, `got null`},
		{"null is_error", map[string]json.RawMessage{"is_error": json.RawMessage(`null`)}, ev, `want a JSON boolean, got null`},
		{"empty", nil, ev, "names no fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ev.WithFields(tt.fields)
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
			if tt.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// H4: a rejection is recognisable through wrapping and carries its reason.
func TestRejectH4(t *testing.T) {
	err := fmt.Errorf("outer: %w", Reject("too big"))
	reason, ok := IsReject(err)
	if !ok || reason != "too big" {
		t.Fatalf("IsReject = %q, %v", reason, ok)
	}
	var re *RejectError
	if !errors.As(err, &re) || re.Reason != "too big" {
		t.Fatalf("errors.As failed: %v", err)
	}
	if _, ok := IsReject(errors.New("plain")); ok {
		t.Fatal("plain error recognised as rejection")
	}
}

func TestCloneSharesNothing(t *testing.T) {
	s := &Submit{Model: "m", Messages: []json.RawMessage{json.RawMessage(`{"a":1}`), nil, json.RawMessage(`"b"`)}, Metadata: map[string]string{"k": "v"}}
	c := s.Clone()
	c.Messages[0][2] = 'X'
	c.Messages[2] = append(c.Messages[2], '!')
	c.Metadata["k"] = "changed"
	if string(s.Messages[0]) != `{"a":1}` || s.Metadata["k"] != "v" || string(s.Messages[2]) != `"b"` {
		t.Fatalf("clone shares memory with original: %+v", s)
	}
	if c.Messages[1] != nil {
		t.Fatal("nil message became non-nil")
	}
	ev := ToolEvent{Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`1`)}
	ec := ev.Clone()
	ec.Arguments = append(ec.Arguments, 'x')
	if string(ec.Result) != "1" {
		t.Fatal("append to cloned arguments overwrote result")
	}
	ec.Result[0] = '2'
	if string(ev.Result) != "1" {
		t.Fatal("tool clone shares memory")
	}
}

func TestSpecValidate(t *testing.T) {
	if err := (Spec{ID: "a", Kind: KindSubmit}).Validate(); err != nil {
		t.Fatal(err)
	}
	err := Spec{Kind: "bogus", Policy: PolicySwallow}.Validate()
	for _, want := range []string{"id is empty", "unknown hook kind", "bus-level tool policy"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want containing %q", err, want)
		}
	}
}
