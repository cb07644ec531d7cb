package trace

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"
)

// A nil recorder records nothing, never reads the clock and never panics:
// runtimes rely on it to keep tracing off for free.
func TestNilRecorder(t *testing.T) {
	var r *Recorder
	if r.Enabled() {
		t.Fatal("nil recorder reports Enabled")
	}
	if got := r.Now(); !got.IsZero() {
		t.Fatalf("nil Now() = %v, want zero time", got)
	}
	if got := r.Since(time.Now().Add(-time.Hour)); got != 0 {
		t.Fatalf("nil Since = %d, want 0", got)
	}
	if seq := r.Add(Event{Hook: HookOnRequest}); seq != 0 {
		t.Fatalf("nil Add = %d, want 0", seq)
	}
	if ev := r.Events(); ev != nil {
		t.Fatalf("nil Events = %v, want nil", ev)
	}
}

// A zero Recorder (not made by NewRecorder) is usable: it must not panic on
// a missing clock.
func TestZeroRecorder(t *testing.T) {
	var r Recorder
	start := r.Now()
	if start.IsZero() {
		t.Fatal("zero Recorder Now() returned the zero time")
	}
	if d := r.Since(start); d < 0 {
		t.Fatalf("Since = %d, want >= 0", d)
	}
	if seq := r.Add(Event{}); seq != 1 {
		t.Fatalf("first Add = %d, want 1", seq)
	}
}

// Seq numbers events 1..n with no gap or duplicate under concurrent Add, and
// each event's stored Seq matches its position.
func TestSeqConcurrent(t *testing.T) {
	r := NewRecorder()
	const workers, each = 8, 200
	returned := make(chan int, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				returned <- r.Add(Event{Plugin: "p", Frame: FrameIndex(w*each + i)})
			}
		}()
	}
	wg.Wait()
	close(returned)
	seen := make(map[int]bool)
	for s := range returned {
		if seen[s] {
			t.Fatalf("Add returned seq %d twice", s)
		}
		seen[s] = true
	}
	ev := r.Events()
	if len(ev) != workers*each {
		t.Fatalf("got %d events, want %d", len(ev), workers*each)
	}
	for i, e := range ev {
		if e.Seq != i+1 {
			t.Fatalf("event %d has Seq %d, want %d", i, e.Seq, i+1)
		}
		if !seen[e.Seq] {
			t.Fatalf("event Seq %d was never returned by Add", e.Seq)
		}
	}
}

// Events returns a copy: changing it (including through Frame) does not
// change the recorder.
func TestEventsCopy(t *testing.T) {
	r := NewRecorder()
	r.Add(Event{Plugin: "a", Frame: FrameIndex(3)})
	ev := r.Events()
	ev[0].Plugin = "changed"
	*ev[0].Frame = 99
	again := r.Events()
	if again[0].Plugin != "a" || *again[0].Frame != 3 {
		t.Fatalf("recorder changed through Events copy: %+v frame %d", again[0], *again[0].Frame)
	}
}

func TestWithoutDurations(t *testing.T) {
	in := []Event{{Seq: 1, Plugin: "a", DurationNS: 5, Frame: FrameIndex(2)}, {Seq: 2, Plugin: "b", DurationNS: 7}}
	out := WithoutDurations(in)
	if len(out) != 2 {
		t.Fatalf("len = %d", len(out))
	}
	for i, e := range out {
		if e.DurationNS != 0 {
			t.Fatalf("event %d duration %d, want 0", i, e.DurationNS)
		}
		if e.Seq != in[i].Seq || e.Plugin != in[i].Plugin {
			t.Fatalf("event %d changed beyond duration: %+v", i, e)
		}
	}
	if in[0].DurationNS != 5 || in[1].DurationNS != 7 {
		t.Fatal("WithoutDurations modified its input")
	}
	*out[0].Frame = 42
	if *in[0].Frame != 2 {
		t.Fatal("WithoutDurations output shares Frame with its input")
	}
	if got := WithoutDurations(nil); len(got) != 0 {
		t.Fatalf("nil input gave %v", got)
	}
}

// The golden form: two-space indent, fields in declaration order, omitempty
// fields absent, frame 0 present, an empty trace has "events": [] and no
// warnings key. Changing this breaks every golden file.
func TestMarshalIndentStable(t *testing.T) {
	tr := Trace{Events: []Event{
		{Seq: 1, Family: FamilyPipeline, Direction: "outbound", Hook: HookOnResponseFrame, Plugin: "p", Frame: FrameIndex(0), Last: true, Action: "reject", Reason: "r", Status: 451, Shadow: true, DurationNS: 9},
		{Seq: 2, Family: FamilyDispatch, Hook: "tool.before", Plugin: "x", Action: "continue", Phase: "walk"},
	}, Warnings: []string{"w"}}
	got, err := tr.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "events": [
    {
      "seq": 1,
      "family": "P",
      "direction": "outbound",
      "hook": "on_response_frame",
      "plugin": "p",
      "frame": 0,
      "last": true,
      "action": "reject",
      "reason": "r",
      "status": 451,
      "shadow": true,
      "duration_ns": 9
    },
    {
      "seq": 2,
      "family": "D",
      "hook": "tool.before",
      "plugin": "x",
      "action": "continue",
      "phase": "walk",
      "duration_ns": 0
    }
  ],
  "warnings": [
    "w"
  ]
}`
	if string(got) != want {
		t.Fatalf("MarshalIndent:\n%s\nwant:\n%s", got, want)
	}
	empty, err := Trace{}.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	if string(empty) != "{\n  \"events\": []\n}" {
		t.Fatalf("empty trace = %q", empty)
	}
	var back Trace
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Events) != 2 || *back.Events[0].Frame != 0 || back.Events[1].Frame != nil {
		t.Fatalf("round trip lost fields: %+v", back.Events)
	}
}

func TestStreamRecorder(t *testing.T) {
	var got []Event
	r := NewStreamRecorder(func(e Event) { got = append(got, e) })
	for _, h := range []string{HookOnRequest, HookOnResponse, HookOnFinish} {
		r.Add(Event{Hook: h, Plugin: "p"})
	}
	if len(got) != 3 {
		t.Fatalf("sink got %d events, want 3", len(got))
	}
	for i, e := range got {
		if e.Seq != i+1 {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
	}
	if got[2].Hook != HookOnFinish {
		t.Errorf("order: %+v", got)
	}
	if ev := r.Events(); ev != nil {
		t.Errorf("a stream recorder kept %d events", len(ev))
	}
}

// TestStreamRecorderFrames: a stream recorder's sink sees each frame
// event with its own index during the call, without an allocation.
func TestStreamRecorderFrames(t *testing.T) {
	var got []int
	r := NewStreamRecorder(func(e Event) { got = append(got, *e.Frame) })
	for i := range 300 {
		r.AddFrame(&Event{Hook: HookOnResponseFrame, Plugin: "p"}, i)
	}
	for i, f := range got {
		if f != i {
			t.Fatalf("event %d had frame %d", i, f)
		}
	}
	got = make([]int, 0, 1000)
	if n := testing.AllocsPerRun(100, func() { r.AddFrame(&Event{Hook: HookOnResponseFrame}, 1) }); n != 0 {
		t.Errorf("AddFrame on a stream recorder: %.1f allocations, want 0", n)
	}
}

// TestWatchedRecorder: a live view gets every event as it is added, in
// order, with its sequence number, and a copy it may keep.
func TestWatchedRecorder(t *testing.T) {
	var got []Event
	r := NewWatchedRecorder(func(e Event) { got = append(got, e) })
	r.Add(Event{Hook: HookOnRequest, Plugin: "a", Action: "continue"})
	if len(got) != 1 || got[0].Seq != 1 || got[0].Plugin != "a" {
		t.Fatalf("after one Add, watcher saw %+v", got)
	}
	r.Add(Event{Hook: HookOnResponseFrame, Plugin: "b", Frame: FrameIndex(0), Action: "continue"})
	if len(got) != 2 || got[1].Seq != 2 || *got[1].Frame != 0 {
		t.Fatalf("after two Adds, watcher saw %+v", got)
	}
	*got[1].Frame = 9
	if ev := r.Events(); *ev[1].Frame != 0 {
		t.Errorf("watcher's copy shares the frame index with the recorder")
	}
}

// appendJSONSeeds are events with every field set and unset, and strings
// that encoding/json escapes.
func appendJSONSeeds() []Event {
	return []Event{
		{},
		{Seq: 1, Family: FamilyPipeline, Direction: "outbound", Hook: HookOnResponseFrame, Plugin: "guardrail", Frame: FrameIndex(0), Action: "continue", DurationNS: 1200},
		{Seq: 7, Family: FamilyDispatch, Hook: "tool.before", Plugin: "x", Frame: FrameIndex(-3), Last: true, Action: "reject", Reason: `blocked "<b>" & 'c' \ é ` + "\u2028\x00\x7f\xff", Status: 403,
			Mutated: MutatedResponseBody, Shadow: true, Error: "panic: \t\n", Phase: "walk", DurationNS: -5},
		{Seq: 2, Family: FamilyPipeline, Hook: HookOnRequest, Plugin: "gate", Action: "reject", Status: 401,
			Headers:   []HeaderChange{{Name: "X-A", Values: []string{"<1>", "2"}}, {Response: true, Name: "Server", Deleted: true, Refused: "late"}},
			Rejection: &Rejection{Header: map[string][]string{"Www-Authenticate": {`Bearer realm="x"`}}, ContentType: "application/json", Body: `{"e":"&"}`}},
	}
}

func TestAppendJSONMatchesMarshal(t *testing.T) {
	for _, e := range appendJSONSeeds() {
		want, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
			t.Errorf("AppendJSON:\n got %s\nwant x%s", got, want)
		}
	}
	e := appendJSONSeeds()[1]
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() { buf = e.AppendJSON(buf[:0]) }); n != 0 {
		t.Errorf("AppendJSON of a plain event: %v allocations, want 0", n)
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("continue", "reason <&>", "outbound", 3, true)
	f.Fuzz(func(t *testing.T, action, reason, dir string, frame int, last bool) {
		e := Event{Seq: frame, Family: Family(dir), Direction: dir, Hook: action, Plugin: reason, Action: action, Reason: reason,
			Status: frame, Mutated: dir, Shadow: last, Error: reason, Phase: action, Last: last, DurationNS: int64(frame)}
		if last {
			e.Frame = FrameIndex(frame)
		}
		want, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON:\n got %s\nwant %s", got, want)
		}
	})
}

// TestRecorderWithoutDurations: such a recorder reads no clock, so a runtime times
// nothing and events carry duration 0.
func TestRecorderWithoutDurations(t *testing.T) {
	r := NewStreamRecorder(func(Event) {}).WithoutDurations()
	t0 := r.Now()
	if !t0.IsZero() {
		t.Errorf("Now() = %v, want the zero time", t0)
	}
	if d := r.Since(t0); d != 0 {
		t.Errorf("Since = %d, want 0", d)
	}
}

// TestGrow: after Grow(n), n events are kept without the slice growing
// again (appending 12 events one by one grows it five times: 1, 2, 4, 8,
// 16), numbered and returned as added.
func TestGrow(t *testing.T) {
	const n = 12
	record := func(grow bool) float64 {
		return testing.AllocsPerRun(50, func() {
			r := NewRecorder()
			if grow {
				r.Grow(n)
			}
			for range n {
				r.Add(Event{Hook: HookOnRequest})
			}
		})
	}
	if with, without := record(true), record(false); without-with < 3 {
		t.Errorf("%v allocations with Grow, %v without; want the regrowths gone", with, without)
	}
	r := NewRecorder()
	r.Add(Event{Plugin: "a"})
	r.Grow(n)
	r.Add(Event{Plugin: "b"})
	if ev := r.Events(); len(ev) != 2 || ev[0].Plugin != "a" || ev[1].Plugin != "b" || ev[1].Seq != 2 {
		t.Errorf("events after Grow: %+v", ev)
	}
	var nilRec *Recorder
	nilRec.Grow(n) // a nil recorder records nothing, and does not panic
}

// TestAppendJSONExtensions: an event with extension changes is written
// exactly as json.Marshal writes it, HTML-safe escaping included, and reads
// back equal from indented JSON (its value kept compact).
func TestAppendJSONExtensions(t *testing.T) {
	e := Event{Seq: 3, Family: FamilyPipeline, Hook: HookOnRequest, Plugin: "p", Action: "continue",
		Extensions: []ExtensionDelta{{Key: "a<b>", Value: json.RawMessage(`{"x":"<&>"}`)}, {Key: "gone", Removed: true},
			{Key: "bad", Value: json.RawMessage(`1`), Refused: "at /: got number, want string"}}}
	want, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.AppendJSON(nil); string(got) != string(want) {
		t.Errorf("AppendJSON = %s\n   Marshal = %s", got, want)
	}
	ind, _ := json.MarshalIndent(e, "", "  ")
	var back Event
	if err := json.Unmarshal(ind, &back); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(back); string(b) != string(want) {
		t.Errorf("round trip through indented JSON = %s, want %s", b, want)
	}
}

// TestRecorderBlocksKeepOrder: a trace that grows past many blocks (and is
// grown by Grow between them) gives back every event, numbered and in
// order with its frame index, from Events and from Take, and a watcher
// sees events only while it is watching.
func TestRecorderBlocksKeepOrder(t *testing.T) {
	watching := false
	var seen []int
	r := NewWatchedRecorderWhen(func() bool { return watching }, func(e Event) { seen = append(seen, e.Seq) })
	r.Grow(3)
	const n = 5000
	for i := range n {
		if i == 1000 {
			r.Grow(700)
		}
		watching = i%1000 == 7
		if i%3 == 0 {
			r.Add(Event{Hook: HookOnRequest})
		} else {
			r.AddFrame(&Event{Hook: HookOnResponseFrame}, i)
		}
	}
	check := func(evs []Event) {
		t.Helper()
		if len(evs) != n {
			t.Fatalf("%d events, want %d", len(evs), n)
		}
		for i, e := range evs {
			if e.Seq != i+1 {
				t.Fatalf("event %d has seq %d", i, e.Seq)
			}
			if (i%3 == 0) != (e.Frame == nil) || (e.Frame != nil && *e.Frame != i) {
				t.Fatalf("event %d: frame %v", i, e.Frame)
			}
		}
	}
	check(r.Events())
	check(r.Take())
	if r.Take() != nil || r.Events() != nil {
		t.Fatal("events left after Take")
	}
	if want := []int{8, 1008, 2008, 3008, 4008}; !slices.Equal(seen, want) {
		t.Fatalf("watcher saw %v, want %v", seen, want)
	}
}
