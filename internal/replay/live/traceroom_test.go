package live

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/trace"
)

// TestStreamTraceRoom: a streamed exchange's trace is given room for as
// many events as the last stream recorded when its head arrives, so the
// next stream of the same shape fills one block; the trace the ring keeps
// is the same either way.
func TestStreamTraceRoom(t *testing.T) {
	up := sseUpstream(t)
	s := startServe(t, up.URL, testChain, Options{}, hangGuard)
	var traces [][]trace.Event
	for i := range 3 {
		resp, err := client.Post(s.base+"/v1/chat", "application/json", strings.NewReader(`{"stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || strings.Count(string(body), "data: ") != sseEvents {
			t.Fatalf("stream %d: status %d, %d events, %v", i, resp.StatusCode, strings.Count(string(body), "data: "), err)
		}
		ex, ok := s.ring.get(uint64(i + 1))
		if !ok {
			t.Fatalf("stream %d not in the ring", i)
		}
		traces = append(traces, ex.Report.Events)
	}
	n := len(traces[0])
	if got := s.streamRoom.Load(); got != int64(n) {
		t.Fatalf("streamRoom = %d after streams of %d events", got, n)
	}
	for i, tr := range traces {
		if len(tr) != n {
			t.Fatalf("stream %d recorded %d events, the first %d", i, len(tr), n)
		}
		if spare := cap(tr) - len(tr); spare > max(64, n/4) {
			t.Errorf("stream %d: the ring keeps %d spare events", i, spare)
		}
		for j := range tr {
			a, b := traces[0][j], tr[j]
			a.DurationNS, b.DurationNS = 0, 0
			if a.Seq != b.Seq || a.Hook != b.Hook || a.Plugin != b.Plugin || (a.Frame == nil) != (b.Frame == nil) || (a.Frame != nil && *a.Frame != *b.Frame) {
				t.Fatalf("stream %d event %d = %+v, the first stream's %+v", i, j, b, a)
			}
		}
	}
}

// TestFitTrace: a trace far under the room it was given is copied to its
// length; a stream's count is noted, at most maxStreamRoom.
func TestFitTrace(t *testing.T) {
	s := &Server{}
	ev := make([]trace.Event, 10, 1000)
	if got := s.fitTrace(ev, false); cap(got) != 10 || len(got) != 10 {
		t.Errorf("len %d cap %d, want 10 and 10", len(got), cap(got))
	}
	if s.streamRoom.Load() != 0 {
		t.Errorf("a buffered exchange set streamRoom to %d", s.streamRoom.Load())
	}
	ev = make([]trace.Event, 400, 420)
	if got := s.fitTrace(ev, true); &got[0] != &ev[0] {
		t.Error("a trace that fills its room was copied")
	}
	if s.streamRoom.Load() != 400 {
		t.Errorf("streamRoom = %d, want 400", s.streamRoom.Load())
	}
	s.fitTrace(make([]trace.Event, maxStreamRoom+5), true)
	if s.streamRoom.Load() != maxStreamRoom {
		t.Errorf("streamRoom = %d, want at most %d", s.streamRoom.Load(), maxStreamRoom)
	}
}
