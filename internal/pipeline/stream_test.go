package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

const threeEvents = "data: one\n\n: keep-alive\n\nevent: x\ndata: two\n\nid: 7\n\ndata: three\n\n"

// frameCalls renders the frame calls as plugin[index-or-last]=bytes.
func frameCalls(log *recLog) []string {
	var out []string
	for _, c := range log.all() {
		if c.hook == "on_response_frame" {
			out = append(out, fmt.Sprintf("%s:%q:%v", c.plugin, c.frame, c.last))
		}
	}
	return out
}

// TestStreamFramesP19P20P21P23 streams through 1, 6 and 20 plugins, half of
// them streaming: frames reach every streamer in reverse declaration order,
// frame n+1 only after frame n reached all; comment-only and field-only
// blocks are relayed, not dispatched; each streamer gets one closing call;
// non-streamers get no OnResponse and no frames.
func TestStreamFramesP19P20P21P23(t *testing.T) {
	for _, n := range []int{1, 6, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			log := &recLog{}
			var fs []*fake
			var streamers []string // reverse declaration order
			for i := range n {
				f := &fake{name: fmt.Sprintf("p%02d", i), log: log, stream: i%2 == 0 || n == 1, finish: true}
				fs = append(fs, f)
				if f.stream {
					streamers = append([]string{f.name}, streamers...)
				}
			}
			c := buildFakes(t, Options{}, fs...)
			cl := &BufferClient{}
			res := c.Run(context.Background(), req(), Upstream{Status: 200, Header: sseHeader(), Stream: &chunks{parts: [][]byte{[]byte(threeEvents)}}}, ExchangeOptions{Client: cl})
			var want []string
			for _, fr := range []string{"data: one\n\n", "event: x\ndata: two\n\n", "data: three\n\n", ""} {
				for _, s := range streamers {
					want = append(want, fmt.Sprintf("%s:%q:%v", s, fr, fr == ""))
				}
			}
			if got := frameCalls(log); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("frames\n got %v\nwant %v", got, want)
			}
			if len(log.seq("on_response")) != 0 {
				t.Errorf("P23: OnResponse ran for a streamed response: %v", log.seq("on_response"))
			}
			if cl.Body.String() != threeEvents || !res.Streamed || res.Frames != 3 || res.Outcome.Kind != gateway.OutcomeAllow {
				t.Errorf("client %q streamed %v frames %d outcome %+v", cl.Body.String(), res.Streamed, res.Frames, res.Outcome)
			}
			// One upstream chunk: one flush after its 5 blocks, then the
			// final one.
			if want := []int{65, 65}; fmt.Sprint(cl.Flushed) != fmt.Sprint(want) {
				t.Errorf("flushes at %v, want %v", cl.Flushed, want)
			}
			// P27: finish after the closing frame calls.
			all := log.seq()
			if !strings.HasSuffix(all[len(all)-n-1], "on_response_frame") {
				t.Errorf("finish did not follow the frames: %v", all[len(all)-n-1:])
			}
		})
	}
}

// TestStreamEndsP21: zero frames, an early end and an unterminated final
// block each give exactly one last=true empty call per streamer.
func TestStreamEndsP21(t *testing.T) {
	tests := []struct {
		name       string
		stream     *chunks
		wantFrames []string
		wantBody   string
		wantKind   gateway.OutcomeKind
		wantWarn   string
	}{
		{"zero frames", &chunks{}, nil, "", gateway.OutcomeAllow, ""},
		{"only comments", &chunks{parts: [][]byte{[]byte(": ping\n\n")}}, nil, ": ping\n\n", gateway.OutcomeAllow, ""},
		{"early end", &chunks{parts: [][]byte{[]byte("data: a\n\ndata: b")}, err: errors.New("reset by peer")},
			[]string{"data: a\n\n"}, "data: a\n\ndata: b", gateway.OutcomeError, "ended early"},
		{"unterminated final block", &chunks{parts: [][]byte{[]byte("data: a\n\ndata: b\n")}},
			[]string{"data: a\n\n"}, "data: a\n\ndata: b\n", gateway.OutcomeAllow, "unterminated final SSE block (8 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &recLog{}
			a := &fake{name: "a", log: log, stream: true}
			b := &fake{name: "b", log: log, stream: true}
			c := buildFakes(t, Options{}, a, b)
			cl := &BufferClient{}
			res := c.Run(context.Background(), req(), Upstream{Status: 200, Header: sseHeader(), Stream: tt.stream}, ExchangeOptions{Client: cl})
			var want []string
			for _, fr := range append(tt.wantFrames, "") {
				want = append(want, fmt.Sprintf("b:%q:%v", fr, fr == ""), fmt.Sprintf("a:%q:%v", fr, fr == ""))
			}
			if got := frameCalls(log); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("frames %v, want %v", got, want)
			}
			for _, cl := range log.all() {
				if cl.last && !cl.frameNil {
					t.Errorf("closing frame not empty: %q", cl.frame)
				}
			}
			if cl.Body.String() != tt.wantBody || res.Outcome.Kind != tt.wantKind || res.Outcome.Status != 200 {
				t.Errorf("body %q outcome %+v", cl.Body.String(), res.Outcome)
			}
			if tt.wantWarn != "" && (len(res.Warnings) == 0 || !strings.Contains(fmt.Sprint(res.Warnings), tt.wantWarn)) {
				t.Errorf("warnings %v lack %q", res.Warnings, tt.wantWarn)
			}
			if tt.wantKind == gateway.OutcomeError && !errors.Is(res.Err, ErrUpstream) {
				t.Errorf("err %v", res.Err)
			}
		})
	}
}

// TestChunkSplitsP19P20: splitting a multi-event stream at every byte
// gives the same trace and the same client bytes.
func TestChunkSplitsP19P20(t *testing.T) {
	input := []byte(threeEvents + "data: α\r\n\r\n:c\r\rdata: z\r\r")
	run := func(parts [][]byte) ([]trace.Event, string) {
		log := &recLog{}
		c := buildFakes(t, Options{}, &fake{name: "a", log: log, stream: true}, &fake{name: "b", log: log, stream: true})
		rec := trace.NewRecorder()
		cl := &BufferClient{}
		c.Run(context.Background(), req(), Upstream{Status: 200, Header: sseHeader(), Stream: &chunks{parts: parts}}, ExchangeOptions{Trace: rec, Client: cl})
		return trace.WithoutDurations(rec.Events()), cl.Body.String() + fmt.Sprint(frameCalls(log))
	}
	render := func(evs []trace.Event) string {
		b, _ := json.Marshal(evs)
		return string(b)
	}
	wantEv, wantOut := run([][]byte{input})
	if len(wantEv) != 2*(5+1)+2 {
		t.Fatalf("reference trace has %d events", len(wantEv))
	}
	for i := 1; i < len(input); i++ {
		ev, out := run([][]byte{input[:i], input[i:]})
		if render(ev) != render(wantEv) || out != wantOut {
			t.Fatalf("split at %d: trace or output differ\n%v\n%v\n%s\n%s", i, ev, wantEv, out, wantOut)
		}
	}
	var bytewise [][]byte
	for i := range input {
		bytewise = append(bytewise, input[i:i+1])
	}
	if ev, out := run(bytewise); render(ev) != render(wantEv) || out != wantOut {
		t.Fatal("one-byte chunks differ")
	}
}

// TestStreamingPredicateP18P22: a plugin that writes the response body makes
// an event stream buffered; a streaming plugin then gets one call with the
// whole body and last=true, as for JSON.
func TestStreamingPredicateP18P22(t *testing.T) {
	body := "data: a\n\ndata: b\n\n"
	tests := []struct {
		name     string
		writer   bool
		header   func() http.Header
		streamed bool
	}{
		{"P18 event stream, no writer: streamed", false, sseHeader, true},
		{"P18 event stream with params, no writer: streamed", false, func() http.Header {
			return http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}
		}, true},
		{"P18 event stream with writer: buffered", true, sseHeader, false},
		{"P22 JSON: one frame with the whole body", false, jsonHeader, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &recLog{}
			s := &fake{name: "s", log: log, stream: true}
			fs := []*fake{s, {name: "plain", log: log}}
			if tt.writer {
				fs = append(fs, &fake{name: "w", log: log, caps: gateway.Capabilities{WritesResponseBody: true},
					resp: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
						ex.SetResponseBody(bytes.ToUpper(ex.ResponseBody()))
						return gateway.Continue()
					}})
			}
			c := buildFakes(t, Options{}, fs...)
			cl := &BufferClient{}
			res := c.Run(context.Background(), req(), Upstream{Status: 200, Header: tt.header(), Stream: &chunks{parts: [][]byte{[]byte(body[:5]), []byte(body[5:])}}}, ExchangeOptions{Client: cl})
			if res.Streamed != tt.streamed {
				t.Fatalf("streamed %v", res.Streamed)
			}
			got := frameCalls(log)
			if !tt.streamed {
				want := fmt.Sprintf("s:%q:true", body)
				if tt.writer {
					want = fmt.Sprintf("s:%q:true", strings.ToUpper(body)) // after the writer (reverse order)
				}
				if len(got) != 1 || got[0] != want {
					t.Errorf("frames %v, want [%s]", got, want)
				}
				if len(log.seq("on_response")) == 0 {
					t.Error("non-streaming plugins got no OnResponse on a buffered response")
				}
				if string(res.Body) != cl.Body.String() || res.Body == nil {
					t.Errorf("result body %q client %q", res.Body, cl.Body.String())
				}
			} else if len(got) != 3 || len(log.seq("on_response")) != 0 {
				t.Errorf("streamed: frames %v responses %v", got, log.seq("on_response"))
			}
			for _, c := range log.all() {
				if c.plugin == "s" && c.hook == "on_response" {
					t.Error("P23: streaming plugin got OnResponse")
				}
			}
		})
	}
}

// TestMidStreamRejectP25: a rejection stops that frame's dispatch; frames
// relayed before stay relayed; the rejected frame is not relayed; every
// streamer still gets its closing call (P21).
func TestMidStreamRejectP25(t *testing.T) {
	log := &recLog{}
	a := &fake{name: "a", log: log, stream: true, finish: true}
	b := &fake{name: "b", log: log, stream: true, finish: true, frame: func(_ context.Context, _ *gateway.Exchange, fr []byte, _ bool) gateway.Action {
		if bytes.Contains(fr, []byte("secret")) {
			return gateway.Reject(451, "leak")
		}
		return gateway.Continue()
	}}
	cc := &fake{name: "c", log: log, stream: true}
	c := buildFakes(t, Options{}, a, b, cc)
	cl := &BufferClient{}
	rec := trace.NewRecorder()
	in := "data: ok\n\n: ping\n\ndata: secret\n\ndata: after\n\n"
	res := c.Run(context.Background(), req(), Upstream{Status: 200, Header: sseHeader(), Stream: &chunks{parts: [][]byte{[]byte(in)}}}, ExchangeOptions{Client: cl, Trace: rec})
	want := []string{`c:"data: ok\n\n":false`, `b:"data: ok\n\n":false`, `a:"data: ok\n\n":false`,
		`c:"data: secret\n\n":false`, `b:"data: secret\n\n":false`,
		`c:"":true`, `b:"":true`, `a:"":true`}
	if got := frameCalls(log); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("frames\n got %v\nwant %v", got, want)
	}
	if cl.Body.String() != "data: ok\n\n: ping\n\n" {
		t.Errorf("client got %q", cl.Body.String())
	}
	// What was relayed before the rejection is flushed, not left in a
	// buffer.
	if n := len(cl.Flushed); n == 0 || cl.Flushed[n-1] != cl.Body.Len() {
		t.Errorf("flushes at %v, body %d bytes", cl.Flushed, cl.Body.Len())
	}
	o := res.Outcome
	if o.Kind != gateway.OutcomeDeny || o.DeniedBy != "b" || o.Reason != "leak" || o.Status != 200 || cl.Status != 200 {
		t.Errorf("outcome %+v", o)
	}
	var last trace.Event
	for _, e := range rec.Events() {
		if e.Action == "reject" {
			last = e
		}
	}
	if last.Plugin != "b" || last.Frame == nil || *last.Frame != 1 || last.Status != 451 {
		t.Errorf("reject event %+v", last)
	}
}

// keeper keeps the frame slice it was given, which P24 forbids.
type keeper struct {
	fake
	kept [][]byte
}

func (k *keeper) OnResponseFrame(_ context.Context, _ *gateway.Exchange, fr []byte, last bool) gateway.Action {
	if !last {
		k.kept = append(k.kept, fr)
	}
	return gateway.Continue()
}

// TestPoisonFramesP24: with PoisonFrames, a plugin that keeps frame bytes
// sees them overwritten after the dispatch; the wire is unaffected.
func TestPoisonFramesP24(t *testing.T) {
	for _, poison := range []bool{false, true} {
		t.Run(fmt.Sprint(poison), func(t *testing.T) {
			k := &keeper{fake: fake{name: "k", log: &recLog{}, caps: gateway.Capabilities{Description: "keeps frames"}}}
			c, err := Build(Spec{Entries: entries("k")}, []gateway.Factory{{Name: "k", New: func(json.RawMessage) (gateway.Plugin, error) { return k, nil }}}, Options{PoisonFrames: poison})
			if err != nil {
				t.Fatal(err)
			}
			cl := &BufferClient{}
			in := "data: one\n\ndata: two\n\n"
			c.Run(context.Background(), req(), Upstream{Status: 200, Header: sseHeader(), Body: []byte(in)}, ExchangeOptions{Client: cl})
			if cl.Body.String() != in {
				t.Fatalf("wire %q", cl.Body.String())
			}
			if len(k.kept) != 2 {
				t.Fatalf("kept %d frames", len(k.kept))
			}
			poisoned := bytes.Count(k.kept[0], []byte{PoisonByte}) == len(k.kept[0])
			if poisoned != poison {
				t.Errorf("kept frame %q poisoned=%v, want %v", k.kept[0], poisoned, poison)
			}
		})
	}
}

// TestFrameAllocsP19: with tracing off, dispatching a frame to streaming
// plugins on the Continue path does not allocate: an exchange of 201 frames
// allocates as much as one of 1 frame.
func TestFrameAllocsP19(t *testing.T) {
	c := benchChain(6, true)
	allocs := func(frames int) float64 {
		st := &repeatStream{chunk: []byte("data: {\"token\":\"x\"}\n\n")}
		return testing.AllocsPerRun(20, func() {
			st.left = frames
			c.Run(context.Background(), benchReq, Upstream{Status: 200, Header: sseHeader(), Stream: st}, ExchangeOptions{Client: discard{}})
		})
	}
	one, many := allocs(1), allocs(201)
	if many != one {
		t.Errorf("1 frame: %v allocs, 201 frames: %v allocs; want the same (0 per frame)", one, many)
	}
}

// TestStreamFlushesPerChunkNotPerFrame: 200 events that arrive in one
// upstream chunk reach the client whole with O(1) flushes (one after the
// chunk, one at the end), not one per event; the same events cut into 7
// chunks at arbitrary offsets take at most one flush per chunk, each at
// the end of a whole block.
func TestStreamFlushesPerChunkNotPerFrame(t *testing.T) {
	var in strings.Builder
	for i := range 200 {
		fmt.Fprintf(&in, "data: {\"i\":%d}\n\n", i)
		if i%50 == 0 {
			in.WriteString(": keep-alive\n\n")
		}
	}
	body := in.String()
	cuts := [][][]byte{{[]byte(body)}}
	var parts [][]byte
	for rest, i := []byte(body), 0; len(rest) > 0; i++ {
		n := min(len(rest), len(body)/7+i)
		parts, rest = append(parts, rest[:n]), rest[n:]
	}
	cuts = append(cuts, parts)
	for _, chunked := range cuts {
		t.Run(fmt.Sprint(len(chunked)), func(t *testing.T) {
			log := &recLog{}
			c := buildFakes(t, Options{}, &fake{name: "a", log: log, stream: true}, &fake{name: "b", log: log, stream: true})
			cl := &BufferClient{}
			res := c.Run(context.Background(), req(), Upstream{Status: 200, Header: sseHeader(), Stream: &chunks{parts: chunked}}, ExchangeOptions{Client: cl})
			if cl.Body.String() != body || res.Frames != 200 || res.Outcome.Kind != gateway.OutcomeAllow {
				t.Fatalf("client got %d of %d bytes, %d frames, outcome %+v", cl.Body.Len(), len(body), res.Frames, res.Outcome)
			}
			if len(cl.Flushed) > len(chunked)+1 {
				t.Errorf("%d flushes for %d upstream chunk(s) of 200 events, want at most %d: %v", len(cl.Flushed), len(chunked), len(chunked)+1, cl.Flushed)
			}
			for _, at := range cl.Flushed {
				if !strings.HasSuffix(body[:at], "\n\n") {
					t.Errorf("flush at %d is not at the end of a block", at)
				}
			}
		})
	}
}

// streamHangGuard bounds a wait that only a bug makes long.
const streamHangGuard = time.Minute

// gatedStream sends first, then waits for release before it sends second
// and ends.
type gatedStream struct {
	first, second string
	release       chan struct{}
	i             int
}

func (s *gatedStream) Next(ctx context.Context) ([]byte, error) {
	s.i++
	switch s.i {
	case 1:
		return []byte(s.first), nil
	case 2:
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return []byte(s.second), nil
	}
	return nil, io.EOF
}

// flushSignal is a ClientWriter that hands the body so far to flushed at
// each Flush.
type flushSignal struct {
	body    bytes.Buffer
	flushed chan string
}

func (c *flushSignal) WriteHeader(int, http.Header) {}
func (c *flushSignal) Write(p []byte) (int, error)  { return c.body.Write(p) }
func (c *flushSignal) Flush()                       { c.flushed <- c.body.String() }

// TestStreamFlushesBeforeWaitingOnUpstream: coalescing never holds an
// event while the upstream is quiet. The upstream sends one event and
// waits; the client must have it flushed before the upstream is let go
// (the test would hang there, until the hang guard, if the runtime held
// it for the next chunk).
func TestStreamFlushesBeforeWaitingOnUpstream(t *testing.T) {
	c := buildFakes(t, Options{}, &fake{name: "a", log: &recLog{}, stream: true})
	up := &gatedStream{first: "data: first\n\n", second: "data: second\n\n", release: make(chan struct{})}
	cl := &flushSignal{flushed: make(chan string, 8)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *Result, 1)
	go func() {
		done <- c.Run(ctx, req(), Upstream{Status: 200, Header: sseHeader(), Stream: up}, ExchangeOptions{Client: cl})
	}()
	select {
	case got := <-cl.flushed:
		if got != up.first {
			t.Errorf("first flush sent %q, want %q", got, up.first)
		}
	case <-time.After(streamHangGuard):
		cancel()
		t.Fatal("the first event was not flushed while the upstream waited")
	}
	close(up.release)
	res := <-done
	if res.Frames != 2 || res.Outcome.Kind != gateway.OutcomeAllow {
		t.Errorf("frames %d, outcome %+v", res.Frames, res.Outcome)
	}
	if got := cl.body.String(); got != up.first+up.second {
		t.Errorf("client got %q", got)
	}
}
