package gateway_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/sdk/gateway"
)

// TestBodyWrites_P17_P30 covers the refusal rules of SetRequestBody and
// SetResponseBody for every phase and declared capability (P17, P30): a
// refused write leaves the body as it was, is recorded with a reason that
// names the rule, and does not count as a mutation.
func TestBodyWrites_P17_P30(t *testing.T) {
	tests := []struct {
		name              string
		phase             gateway.Phase
		wReq, wResp, resp bool
		applied           bool
		why               string // substring of the refusal reason
	}{
		{name: "request writer in OnRequest", phase: gateway.PhaseRequest, wReq: true, applied: true},
		{name: "undeclared request write", phase: gateway.PhaseRequest, wResp: true, why: "writes_request_body (P17)"},
		{name: "request writer in OnResponse", phase: gateway.PhaseResponse, wReq: true, why: "only change during OnRequest"},
		{name: "request writer in a frame", phase: gateway.PhaseFrame, wReq: true, why: "only change during OnRequest"},
		{name: "request writer in OnFinish", phase: gateway.PhaseFinish, wReq: true, why: "OnFinish are dropped (P30)"},
		{name: "response writer in OnResponse", phase: gateway.PhaseResponse, wResp: true, resp: true, applied: true},
		{name: "undeclared response write", phase: gateway.PhaseResponse, wReq: true, resp: true, why: "writes_response_body (P17)"},
		{name: "response writer in OnRequest", phase: gateway.PhaseRequest, wResp: true, resp: true, why: "OnResponse of a buffered response"},
		{name: "response writer in a frame", phase: gateway.PhaseFrame, wResp: true, resp: true, why: "OnResponse of a buffered response"},
		{name: "response writer in OnFinish", phase: gateway.PhaseFinish, wReq: true, wResp: true, resp: true, why: "OnFinish are dropped (P30)"},
		{name: "nothing declared in OnFinish", phase: gateway.PhaseFinish, resp: true, why: "(P30)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex, ctl := gateway.NewExchange(gateway.Outbound, gateway.Request{})
			ctl.SetRequestBody([]byte("req"))
			ctl.SetResponseBody([]byte("resp"))
			ctl.Enter("p", tc.phase, tc.wReq, tc.wResp)
			set, body := ex.SetRequestBody, ex.RequestBody
			if tc.resp {
				set, body = ex.SetResponseBody, ex.ResponseBody
			}
			old := slices.Clone(body())
			if got := set([]byte("new")); got != tc.applied {
				t.Fatalf("write applied = %v, want %v", got, tc.applied)
			}
			want := old
			if tc.applied {
				want = []byte("new")
			}
			if !bytes.Equal(body(), want) {
				t.Errorf("body after the write = %q, want %q", body(), want)
			}
			ws := ctl.TakeWrites()
			if len(ws) != 1 {
				t.Fatalf("recorded %d writes, want 1", len(ws))
			}
			w := ws[0]
			if w.Plugin != "p" || w.Response != tc.resp || w.Applied != tc.applied {
				t.Errorf("write record %+v: want plugin p, response %v, applied %v", w, tc.resp, tc.applied)
			}
			if tc.applied && w.Why != "" {
				t.Errorf("applied write has a refusal reason %q", w.Why)
			}
			if !tc.applied && !strings.Contains(w.Why, tc.why) {
				t.Errorf("refusal reason %q does not contain %q", w.Why, tc.why)
			}
			req, resp := ctl.TakeMutated()
			if req != (tc.applied && !tc.resp) || resp != (tc.applied && tc.resp) {
				t.Errorf("mutated = (%v, %v) after an applied=%v response=%v write", req, resp, tc.applied, tc.resp)
			}
			if again := ctl.TakeWrites(); len(again) != 0 {
				t.Errorf("TakeWrites did not reset the record: %+v", again)
			}
			if r1, r2 := ctl.TakeMutated(); r1 || r2 {
				t.Error("TakeMutated did not reset the record")
			}
		})
	}
}

// TestBodyWritesKept_P17: with KeepUndeclaredWrites an undeclared write is
// kept in the exchange (the later readers see it) but not applied: it
// reports false, is recorded as kept with the body tried, and is no
// mutation. Only where a declared write would apply, while the body is
// held; a write refused for another reason stays refused. Reset turns it
// off.
func TestBodyWritesKept_P17(t *testing.T) {
	tests := []struct {
		name       string
		phase      gateway.Phase
		resp, held bool
		kept       bool
	}{
		{name: "request in OnRequest", phase: gateway.PhaseRequest, held: true, kept: true},
		{name: "response in OnResponse", phase: gateway.PhaseResponse, resp: true, held: true, kept: true},
		{name: "request in OnResponse", phase: gateway.PhaseResponse, held: true},
		{name: "response in a frame", phase: gateway.PhaseFrame, resp: true, held: true},
		{name: "request in OnFinish", phase: gateway.PhaseFinish, held: true},
		{name: "request not held (P11)", phase: gateway.PhaseRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex, ctl := gateway.NewExchange(gateway.Outbound, gateway.Request{})
			if tc.held {
				ctl.SetRequestBody([]byte("req"))
				ctl.SetResponseBody([]byte("resp"))
			}
			ctl.KeepUndeclaredWrites(true)
			ctl.Enter("p", tc.phase, false, false)
			set, body := ex.SetRequestBody, ex.RequestBody
			if tc.resp {
				set, body = ex.SetResponseBody, ex.ResponseBody
			}
			old := slices.Clone(body())
			if set([]byte("new")) {
				t.Fatal("an undeclared write reported applied")
			}
			want := old
			if tc.kept {
				want = []byte("new")
			}
			if !bytes.Equal(body(), want) {
				t.Errorf("body after the write = %q, want %q", body(), want)
			}
			ws := ctl.TakeWrites()
			if len(ws) != 1 || ws[0].Applied || ws[0].Kept != tc.kept {
				t.Fatalf("write record %+v: want one, not applied, kept %v", ws, tc.kept)
			}
			if finish := tc.phase == gateway.PhaseFinish; ws[0].Undeclared == finish || (!finish && string(ws[0].Body) != "new") {
				t.Errorf("write record %+v: want undeclared with the body tried (not in OnFinish, P30)", ws[0])
			}
			if r1, r2 := ctl.TakeMutated(); r1 || r2 {
				t.Errorf("mutated = (%v, %v): a kept write is no mutation", r1, r2)
			}
		})
	}
	ex, ctl := gateway.NewExchange(gateway.Outbound, gateway.Request{})
	ctl.KeepUndeclaredWrites(true)
	ctl.Reset(gateway.Outbound, gateway.Request{})
	ctl.SetRequestBody([]byte("req"))
	ctl.Enter("p", gateway.PhaseRequest, false, false)
	ex.SetRequestBody([]byte("new"))
	if string(ex.RequestBody()) != "req" {
		t.Errorf("after Reset an undeclared write was kept: %q", ex.RequestBody())
	}
}

// TestStateKeys_P31: state is typed, per key (two keys with one name are
// distinct) and per exchange (P31); a clone's state is its own.
func TestStateKeys_P31(t *testing.T) {
	a, b := gateway.NewKey[int]("n"), gateway.NewKey[int]("n")
	if a.Name() != "n" {
		t.Errorf("Name() = %q, want n", a.Name())
	}
	ex1, ctl1 := gateway.NewExchange(gateway.Outbound, gateway.Request{})
	ex2, _ := gateway.NewExchange(gateway.Outbound, gateway.Request{})
	if v, ok := gateway.GetState(ex1, a); ok || v != 0 {
		t.Errorf("unset state = %v, %v; want 0, false", v, ok)
	}
	gateway.SetState(ex1, a, 1)
	gateway.SetState(ex1, b, 2)
	if v, ok := gateway.GetState(ex1, a); !ok || v != 1 {
		t.Errorf("state under a = %v, %v; want 1, true", v, ok)
	}
	if v, ok := gateway.GetState(ex1, b); !ok || v != 2 {
		t.Errorf("state under b (same name as a) = %v, %v; want 2, true", v, ok)
	}
	if _, ok := gateway.GetState(ex2, a); ok {
		t.Error("another exchange sees this exchange's state")
	}
	clone, _ := ctl1.Clone()
	gateway.SetState(clone, a, 10)
	if v, _ := gateway.GetState(ex1, a); v != 1 {
		t.Errorf("setting state on a clone changed the original to %v", v)
	}
	if v, _ := gateway.GetState(clone, b); v != 2 {
		t.Errorf("clone's state under b = %v, want the original's 2", v)
	}
}

// TestOutcomeOnlyInFinish_P29: the outcome is visible during OnFinish only,
// and only once the host set it (P29).
func TestOutcomeOnlyInFinish_P29(t *testing.T) {
	want := gateway.Outcome{Kind: gateway.OutcomeDeny, Status: 403, DeniedBy: "gate", Reason: "no", Duration: time.Second}
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{})
	ctl.Enter("p", gateway.PhaseFinish, false, false)
	if _, ok := ex.Outcome(); ok {
		t.Error("outcome available in OnFinish before the host set one")
	}
	ctl.SetOutcome(want)
	for _, ph := range []gateway.Phase{gateway.PhaseRequest, gateway.PhaseResponse, gateway.PhaseFrame} {
		ctl.Enter("p", ph, false, false)
		if o, ok := ex.Outcome(); ok || o != (gateway.Outcome{}) {
			t.Errorf("phase %d: outcome %+v, %v; want none outside OnFinish", ph, o, ok)
		}
	}
	ctl.Enter("p", gateway.PhaseFinish, false, false)
	if o, ok := ex.Outcome(); !ok || o != want {
		t.Errorf("OnFinish outcome = %+v, %v; want %+v, true", o, ok, want)
	}
}

// TestNormalize_P4: either write capability implies ReadsBody, nothing else
// changes, and the result shares no slice memory with the input (P4).
func TestNormalize_P4(t *testing.T) {
	tests := []struct {
		name      string
		in        gateway.Capabilities
		wantReads bool
	}{
		{name: "nothing", in: gateway.Capabilities{}, wantReads: false},
		{name: "reads only", in: gateway.Capabilities{ReadsBody: true}, wantReads: true},
		{name: "writes request", in: gateway.Capabilities{WritesRequestBody: true}, wantReads: true},
		{name: "writes response", in: gateway.Capabilities{WritesResponseBody: true}, wantReads: true},
		{name: "writes both", in: gateway.Capabilities{WritesRequestBody: true, WritesResponseBody: true}, wantReads: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Requires, tc.in.RequiresAny, tc.in.Description = []string{"a"}, []string{"b", "c"}, "d"
			got := tc.in.Normalize()
			want := tc.in
			want.ReadsBody = tc.wantReads
			if !got.Equal(want) {
				t.Errorf("Normalize() = %+v, want %+v", got, want)
			}
			got.Requires[0], got.RequiresAny[0] = "x", "y"
			if tc.in.Requires[0] != "a" || tc.in.RequiresAny[0] != "b" {
				t.Error("the normalised capabilities share slices with the input")
			}
		})
	}
}

// TestCheckDescription_P5: non-empty, one line (any Unicode line break), at
// most 80 runes, counted as runes and not bytes (P5).
func TestCheckDescription_P5(t *testing.T) {
	tests := []struct {
		name string
		desc string
		why  string // substring of the error; "" means valid
	}{
		{name: "ok", desc: "Rejects requests without an API version"},
		{name: "empty", desc: "", why: "empty"},
		{name: "80 ASCII runes", desc: strings.Repeat("a", 80)},
		{name: "81 ASCII runes", desc: strings.Repeat("a", 81), why: "81 characters"},
		{name: "80 two-byte runes", desc: strings.Repeat("é", 80)},
		{name: "81 two-byte runes", desc: strings.Repeat("é", 81), why: "81 characters"},
		{name: "80 four-byte runes", desc: strings.Repeat("🔒", 80)},
		{name: "81 four-byte runes", desc: strings.Repeat("🔒", 81), why: "81 characters"},
		{name: "newline", desc: "one\ntwo", why: "more than one line"},
		{name: "carriage return", desc: "one\rtwo", why: "more than one line"},
		{name: "line separator U+2028", desc: "one\u2028two", why: "more than one line"},
		{name: "paragraph separator U+2029", desc: "one\u2029two", why: "more than one line"},
		{name: "next line U+0085", desc: "one\u0085two", why: "more than one line"},
		{name: "tab is not a line break", desc: "one\ttwo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := gateway.CheckDescription(tc.desc)
			switch {
			case tc.why == "" && err != nil:
				t.Errorf("CheckDescription(%q) = %v, want nil", tc.desc, err)
			case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
				t.Errorf("CheckDescription(%q) = %v, want an error containing %q", tc.desc, err, tc.why)
			}
		})
	}
}
