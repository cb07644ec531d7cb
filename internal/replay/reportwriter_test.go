package replay

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/abkit/abkit/internal/trace"
)

// TestReportWriterFormsMatchAppendJSON: a writer that encodes repeated
// frame events from their cached forms writes exactly what one encoding
// every event with trace.Event.AppendJSON writes, for events that differ
// in any field, with strings that need escaping, and numbers of any size.
func TestReportWriterFormsMatchAppendJSON(t *testing.T) {
	base := trace.Event{Family: trace.FamilyPipeline, Direction: "outbound", Hook: trace.HookOnResponseFrame, Plugin: "guardrail", Action: "continue"}
	vary := []func(*trace.Event){
		func(*trace.Event) {},
		func(e *trace.Event) { e.Plugin = "a<b>&\"c\"\\ é \u2028" },
		func(e *trace.Event) { e.Plugin = `x,"frame":0` },
		func(e *trace.Event) { e.Last = true },
		func(e *trace.Event) { e.Action, e.Reason, e.Status = "reject", "blocked: \"drop table\"", 451 },
		func(e *trace.Event) { e.Shadow = true },
		func(e *trace.Event) { e.Mutated = trace.MutatedResponseBody },
		func(e *trace.Event) { e.Error = "panic: boom\n" },
		func(e *trace.Event) { e.Phase = "event" },
		func(e *trace.Event) { e.Direction = "" },
		func(e *trace.Event) { e.DurationNS = 1234 },
		func(e *trace.Event) { e.Frame = nil },
		func(e *trace.Event) {
			e.Headers = []trace.HeaderChange{{Name: "X-A", Values: []string{"1"}, Response: true}}
		},
		func(e *trace.Event) { e.Rejection = &trace.Rejection{Body: "no"} },
		func(e *trace.Event) { e.Extensions = []trace.ExtensionDelta{{Key: "k"}} },
	}
	var events []trace.Event
	for round, frame := range []int{0, 7, 123456789, 0, 1} {
		for _, v := range vary {
			e := base
			e.Frame = &frame
			v(&e)
			e.Seq = len(events) + 1 + round*1_000_000
			events = append(events, e)
		}
	}
	var want, got bytes.Buffer
	plain := NewReportWriter(&want)
	cached := NewReportWriter(&got)
	var forms []frameForm
	cached.forms = &forms
	for i := range events {
		if err := plain.Event(&events[i]); err != nil {
			t.Fatal(err)
		}
		if err := cached.Event(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	plain.Finish(Outcome{Kind: "allow"}, nil)
	cached.Finish(Outcome{Kind: "allow"}, nil)
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("cached forms wrote\n%s\nwant\n%s", got.Bytes(), want.Bytes())
	}
	if len(forms) == 0 {
		t.Fatal("no form was cached")
	}
}

// TestFrameKeyCoversEvent: frameKey holds every field of trace.Event but
// Seq, Frame and the three a cached event must not have; a field added
// to trace.Event must be added to frameKey (and ReportWriter.form) too.
func TestFrameKeyCoversEvent(t *testing.T) {
	ev := reflect.TypeFor[trace.Event]()
	key := reflect.TypeFor[frameKey]()
	var names []string
	for f := range ev.Fields() {
		switch f.Name {
		case "Seq", "Frame", "Headers", "Rejection", "Extensions":
			continue
		}
		names = append(names, f.Name)
	}
	if len(names) != key.NumField() {
		t.Fatalf("trace.Event has %d fields a frameKey must hold (%v); frameKey has %d", len(names), names, key.NumField())
	}
	for i, n := range names {
		if k := key.Field(i); !equalFold(k.Name, n) {
			t.Errorf("frameKey field %d is %s; trace.Event's is %s", i, k.Name, n)
		}
	}
}

func equalFold(a, b string) bool {
	return bytes.EqualFold([]byte(a), []byte(b)) || (a == "err" && b == "Error")
}

// TestFrameKeyEqual: equal is ==, field by field, whether the strings are
// the same bytes or equal copies.
func TestFrameKeyEqual(t *testing.T) {
	cp := func(s string) string { return string([]byte(s)) }
	base := frameKey{trace.FamilyPipeline, "outbound", "on_response_frame", "guardrail", false, "continue", "", 0, "", false, "", "", 0}
	same := frameKey{trace.Family(cp(string(base.family))), cp(base.direction), cp(base.hook), cp(base.plugin), false, cp(base.action), "", 0, "", false, "", "", 0}
	if !base.equal(&base) || !base.equal(&same) {
		t.Fatal("equal keys compare unequal")
	}
	for i, change := range []func(*frameKey){
		func(k *frameKey) { k.family = "D" },
		func(k *frameKey) { k.direction = "inbound" },
		func(k *frameKey) { k.hook = "on_request" },
		func(k *frameKey) { k.plugin = "guardrai1" },
		func(k *frameKey) { k.last = true },
		func(k *frameKey) { k.action = "reject" },
		func(k *frameKey) { k.reason = "x" },
		func(k *frameKey) { k.status = 451 },
		func(k *frameKey) { k.mutated = "response_body" },
		func(k *frameKey) { k.shadow = true },
		func(k *frameKey) { k.err = "e" },
		func(k *frameKey) { k.phase = "p" },
		func(k *frameKey) { k.durationNS = 1 },
	} {
		k := base
		change(&k)
		if k.equal(&base) || base.equal(&k) || (k == base) {
			t.Errorf("change %d: keys compare equal", i)
		}
	}
	if n := reflect.TypeFor[frameKey]().NumField(); n != 13 {
		t.Errorf("frameKey has %d fields; equal and this test know 13", n)
	}
}
