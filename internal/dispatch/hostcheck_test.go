package dispatch

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/abkit/abkit/sdk/intercept"
)

// D2 (choice D2.host-check): by default an invalid host payload is a host
// error and no extension is asked; with HostTypeOnly only its shape is
// checked, so it is dispatched, while a payload of the wrong shape is still
// a host error and replacements still meet every rule.
func TestHostTypeOnlyD2(t *testing.T) {
	invalid := json.RawMessage(`{"text":""}`)
	f := &fake{}
	d, _ := build(t, contrib("a", f, intercept.InputReceive))
	if _, err := d.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: invalid}); !errors.Is(err, ErrInvalidPayload) || len(f.seenCalls()) != 0 {
		t.Fatalf("validate: err = %v, calls %v; want ErrInvalidPayload and no call", err, f.seenCalls())
	}

	f = answers(intercept.Answer{Decision: intercept.DecisionReplace, Replacement: json.RawMessage(`{"text":""}`)})
	d2, err := New([]Contribution{contrib("a", f, intercept.InputReceive)}, Options{HostTypeOnly: true, OnWarning: func(Warning) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	res, err := d2.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: invalid})
	if err != nil || len(f.seenCalls()) != 1 || res.Changed || len(res.Warnings) != 1 {
		t.Fatalf("type-only: res %+v, err %v, calls %v; want the payload dispatched and the invalid replacement warned about", res, err, f.seenCalls())
	}
	if _, err := d2.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: json.RawMessage(`{"name":"x"}`)}); !errors.Is(err, ErrInvalidPayload) {
		t.Fatalf("type-only, another point's payload: err = %v; want ErrInvalidPayload", err)
	}
	if _, err := d2.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: &intercept.ToolBeforePayload{Name: "x"}}); !errors.Is(err, ErrWrongPayload) {
		t.Fatalf("type-only, another point's type: err = %v; want ErrWrongPayload", err)
	}
	if _, err := d2.Dispatch(bg, Request{Point: intercept.InputReceive, Payload: &intercept.InputPayload{}}); err != nil {
		t.Fatalf("type-only, an invalid typed payload: %v; want it dispatched", err)
	}
}
