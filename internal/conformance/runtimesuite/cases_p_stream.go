package runtimesuite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addPipelineStreamCases registers the cases of streamed and JSON responses: frames, their order and shapes, the one last call, mid-stream rejects and cancels (P18-P25).
func addPipelineStreamCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		pcase("P21/cancel/mid-stream", []string{"P15", "P20", "P21", "P26", "P28"}, "a client gone during frame 1: no later frame, exactly one last call each, finish with a fresh context",
			"Three streaming, finishing probes get a five-event stream; the first to get each frame (p2) cancels the client's context while handling frame 1. No frame after frame 1 may be dispatched to anyone (frame 1 itself may or may not reach the others); every streaming plugin still gets exactly one last=true call; every plugin finishes, in LIFO order, with a context that is not cancelled and has a deadline; the exchange does not end as a plain allow.",
			p21CancelMidStream),
		pcase("P19/split/every-byte", []string{"P19", "P20"}, "two SSE events split into two chunks at every byte: the same frames each time",
			"Sends the same two-event stream split into two chunks at every byte offset. Every split must yield exactly the two complete events as frames, byte for byte.",
			p19SplitEveryByte),
		pcase("P22/json/one-last-frame", []string{"P22", "P23"}, "a JSON response: one OnResponseFrame(whole body, last=true) per streamer; OnResponse for the others",
			"A non-streamed response must reach each streaming plugin as exactly one frame call carrying the whole body with last=true, and never as OnResponse; a non-streaming plugin gets OnResponse and no frames.",
			p22JsonOneLastFrame),
		pcase("P23/sse/non-streamer-nothing", []string{"P23", "P18"}, "a streamed response: a non-streaming plugin gets neither frames nor OnResponse",
			"Streams two events through a chain of a non-streaming and a streaming plugin (no body writer, so the response is relayed frame by frame). The non-streaming plugin gets no response-side call; the streamer gets no OnResponse.",
			p23SseNonStreamerNothing),
		pcase("P18/buffered-with-writer", []string{"P18"}, "an event stream with a response-body writer in the chain is buffered: OnResponse runs",
			"With a plugin declaring writes_response_body, the runtime buffers the stream and runs the response hooks: the writer gets OnResponse and the result is not streamed.",
			p18BufferedWithWriter),
		pcase("P25/mid-stream-reject", []string{"P25", "P21"}, "a reject at frame 1 stops that frame's dispatch and the stream; the client keeps frame 0",
			"Three streaming plugins; the last in declaration order (first to get each frame) rejects frame 1. Frame 1 reaches no other plugin, no later frame is dispatched, each plugin still gets one last call, the outcome is a deny by that plugin and the client body holds only frame 0.",
			p25MidStreamReject),
		pcase("P25/mid-stream-reject/split-frame", []string{"P25", "P19"}, "a reject of a frame that spanned chunks: the client keeps frame 0 only, nothing of the rest",
			"The second event arrives split across two chunks, with the start of a third after it; the only streamer rejects frame 1. The client gets frame 0 and nothing else, no bytes of the unread rest are relayed, no unterminated-block warning is given, and the outcome is a deny.",
			p25MidStreamRejectSplitFrame),
		pcase("P22/json/panic-in-the-one-frame", []string{"P22", "P21"}, "a streamer panicking in the single whole-body frame call is not called again: that call was its last",
			"A JSON response reaches a streaming plugin as one OnResponseFrame(body, last=true); the plugin panics there. That call was its closing call (P21: exactly one last=true call, also after a panic), so it gets no further frame call; the exchange ends as an error with status 500.",
			p22JsonPanicInTheOneFrame),
		pcase("P20/stream/frame-count-and-body", []string{"P19", "P20"}, "the frames counted and the bytes relayed match the stream, for 5 frames in uneven chunks",
			"Five events arrive in chunks that cut them in odd places. The runtime must count five frames, hand each streamer five frames, and relay the stream to the client byte for byte.",
			p20StreamFrameCountAndBody),
	} {
		r.Add(c)
	}
	// P19–P23: frames, frame order, one last call, one path per plugin.
	for _, n := range []int{1, 6, 20} {
		for _, fr := range []streamCase{{"zero-frames", 0, false}, {"one-frame", 1, false}, {"three-frames", 3, false}, {"early-end", 2, true}} {
			n, fr := n, fr
			r.Add(pcase(fmt.Sprintf("P20/stream/%d-plugins/%s", n, fr.name), []string{"P19", "P20", "P21", "P23", "P27"},
				fmt.Sprintf("%d streaming plugins, %s: each frame to all in reverse order before the next; one last call each", n, fr.name),
				"Streams an SSE response through a chain of streaming, finishing probes. Each frame must reach every plugin in reverse declaration order before the next frame reaches any; then each plugin gets exactly one last=true call with an empty frame (also for zero frames and an early end); no plugin gets OnResponse; then OnFinish in reverse order.",
				p20Stream(n, fr)))
		}
	}
	// P18/P19 over the shapes real event streams take: line ends, comments,
	// fields, multi-line data, charset parameters, empty and unterminated
	// streams. Frames are the dispatched blocks, byte for byte; the client
	// gets every byte, dispatched or not.
	for _, sh := range sseShapes {
		sh := sh
		r.Add(pcase("P19/shape/"+sh.name, []string{"P19", "P18", "P21"}, "event stream shape "+sh.name+": "+sh.summary,
			"Streams the shape through two streaming probes. Each must get exactly the blocks with a data line as frames (raw bytes, terminator included), in order, then one last=true call; the client must get every byte of the stream, streamed; an unterminated final block is relayed, not dispatched, and warned about (P19).",
			p19Shape(sh)))
	}
}

func p20Stream(n int, fr streamCase) func(t *conformance.T) {
	return func(t *conformance.T) {
		frames := sseFrames(fr.n)
		calls, res := pipe{plugs: chain(n, "finish", "stream"), exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(frames, fr.early))}}.run(t, "P20")
		ps := rev(names(n))
		var want []string
		for i := range fr.n {
			want = append(want, each(ps, fmt.Sprintf("frame%d", i))...)
		}
		want = cat(each(names(n), "request"), want, each(ps, "last"), each(ps, "finish"))
		got := seq(calls)
		rule := "P20"
		lasts := seq(calls, "frame")
		nLast := 0
		for _, s := range lasts {
			if strings.HasSuffix(s, ".last") {
				nLast++
			}
		}
		switch {
		case len(seq(calls, "response")) > 0:
			rule = "P23"
		case nLast != n:
			rule = "P21"
		case !slices.Equal(seq(calls, "finish"), each(ps, "finish")):
			rule = "P27"
		}
		t.Diff(rule, "call sequence", want, got)
		for _, c := range calls {
			if c.Hook == "frame" && !c.Last && c.FrameIndex < len(frames) && c.Frame != frameAs(t, frames[c.FrameIndex]) {
				t.ChoiceErrorf("P19.frame", "P19", "%s frame %d: got %q, want the complete SSE event as %s: %q", c.Probe, c.FrameIndex, c.Frame, t.Alternative("P19.frame"), frameAs(t, frames[c.FrameIndex]))
			}
			if c.Hook == "frame" && c.Last && c.Frame != "" {
				t.Errorf("P21", "%s: the last=true call carried a frame %q; want an empty frame", c.Probe, c.Frame)
			}
		}
		if e := res.GetExchanges(); len(e) == 1 && fr.early && e[0].GetOutcome().GetKind() != "error" {
			t.Errorf("P21", "an early-ended stream must end in an error outcome, got %v", e[0].GetOutcome())
		}
	}
}

func p21CancelMidStream(t *conformance.T) {
	pl := chain(3, "finish", "stream")
	pl[2].script = on("frame", 1, &abkitv1.ProbeReply{CancelClient: true})
	calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(sseFrames(5), false))}}.run(t, "P21")
	lasts := map[string]int{}
	for _, c := range calls {
		switch {
		case c.Hook == "frame" && !c.Last && c.FrameIndex > 1:
			t.Errorf("P15", "%s got frame %d after the client went away during frame 1", c.Probe, c.FrameIndex)
		case c.Hook == "frame" && c.Last:
			lasts[c.Probe]++
		case c.Hook == "finish" && (c.CtxDone || c.Deadline <= 0):
			t.Errorf("P28", "%s: OnFinish context done=%v deadline in %v; want a fresh, live context with a host-set deadline", c.Probe, c.CtxDone, c.Deadline)
		}
	}
	for _, p := range names(3) {
		if lasts[p] != 1 {
			t.Errorf("P21", "%s got %d last=true calls; want exactly 1", p, lasts[p])
		}
	}
	t.Diff("P26", "finish calls", each(rev(names(3)), "finish"), seq(calls, "finish"))
	if e := res.GetExchanges(); len(e) != 1 || (e[0].GetOutcome().GetKind() == "allow" && e[0].GetOutcome().GetStatus() == 200 && !e[0].GetCancelled()) {
		t.Errorf("P15", "exchange result %v; a stream cut short by the client must not end as a plain allow", e)
	}
}

func p19SplitEveryByte(t *conformance.T) {
	body := "event: a\ndata: one\n\ndata: two\r\n\r\n"
	want := []string{"event: a\ndata: one\n\n", "data: two\r\n\r\n"}
	var exs []*abkitv1.ExchangeSpec
	for k := 1; k < len(body); k++ {
		exs = append(exs, exchange(sseUpstream([]string{body[:k], body[k:]}, false)))
	}
	calls, _ := pipe{plugs: chain(1, "stream"), exchanges: exs}.run(t, "P19")
	got := map[uint32][]string{}
	for _, c := range calls {
		if c.Hook == "frame" && !c.Last {
			got[c.Exchange] = append(got[c.Exchange], c.Frame)
		}
	}
	for k := range exs {
		if !t.ChoiceDiff("P19.frame", "P19", fmt.Sprintf("frames when split at byte %d", k+1), framesAs(t, want), got[uint32(k)]) {
			return
		}
	}
}

func p19Shape(sh sseShape) func(t *conformance.T) {
	return func(t *conformance.T) {
		up := sseUpstream(sh.chunks, false)
		if sh.ct != "" {
			up.Header = []*abkitv1.Header{{Name: "Content-Type", Values: []string{sh.ct}}}
		}
		calls, res := pipe{plugs: chain(2, "stream"), exchanges: []*abkitv1.ExchangeSpec{exchange(up)}}.run(t, "P19")
		for _, p := range names(2) {
			var got []string
			lasts := 0
			for _, c := range calls {
				if c.Probe == p && c.Hook == "frame" {
					if c.Last {
						lasts++
					} else {
						got = append(got, c.Frame)
					}
				}
			}
			t.ChoiceDiff("P19.frame", "P19", p+" frames", framesAs(t, sh.frames), got)
			if lasts != 1 {
				t.Errorf("P21", "%s got %d last=true calls; want 1", p, lasts)
			}
		}
		e := res.GetExchanges()
		if len(e) != 1 {
			t.Fatalf("P19", "%d exchange results; want 1", len(e))
		}
		if !e[0].GetStreamed() {
			t.Errorf("P18", "content type %q was not streamed", up.Header[0].Values[0])
		}
		if want := strings.Join(sh.chunks, ""); !relayed(t, e[0].GetBody(), want) {
			t.ChoiceErrorf("P19.relay", "P19", "client body %q; want the stream %q relayed as %s", e[0].GetBody(), want, t.Alternative("P19.relay"))
		}
		if int(e[0].GetFrames()) != len(sh.frames) {
			t.Errorf("P19", "the runtime counted %d frames; want %d", e[0].GetFrames(), len(sh.frames))
		}
		warned := false
		for _, w := range e[0].GetWarnings() {
			if w.GetRule() == "P19" {
				warned = true
			}
		}
		if warned != sh.warn {
			t.Errorf("P19", "P19 warning given: %v; want %v (only an unterminated final block is warned about): %v", warned, sh.warn, e[0].GetWarnings())
		}
		if o := e[0].GetOutcome(); o.GetKind() != "allow" || o.GetStatus() != 200 {
			t.Errorf("P19", "outcome %v; want allow 200", o)
		}
	}
}

func p22JsonOneLastFrame(t *conformance.T) {
	pl := []plug{{name: "plain"}, {name: "streamer", behaviours: []string{"stream"}}}
	calls, _ := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{"ok":true}`))}}.run(t, "P22")
	// When the one frame comes (in the reverse walk or after it)
	// is choice P22.timing; that it comes, once, is the rule.
	want := []string{"plain.request", "streamer.request", "streamer.last", "plain.response"}
	if t.Alternative("P22.timing") == "after-walk" {
		want = []string{"plain.request", "streamer.request", "plain.response", "streamer.last"}
	}
	got := seq(calls)
	if t.Diff("P22", "calls, in any order", slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))) {
		t.ChoiceDiff("P22.timing", "P22", "calls", want, got)
	}
	for _, c := range calls {
		if c.Hook == "frame" && c.Frame != `{"ok":true}` {
			t.Errorf("P22", "the single frame carried %q; want the whole body", c.Frame)
		}
	}
}

func p23SseNonStreamerNothing(t *conformance.T) {
	pl := []plug{{name: "plain"}, {name: "streamer", behaviours: []string{"stream"}}}
	calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(sseFrames(2), false))}}.run(t, "P23")
	t.Diff("P23", "calls", []string{"plain.request", "streamer.request", "streamer.frame0", "streamer.frame1", "streamer.last"}, seq(calls))
	if e := res.GetExchanges(); len(e) == 1 && !e[0].GetStreamed() {
		t.Errorf("P18", "an event stream with no response-body writer must be streamed")
	}
}

func p18BufferedWithWriter(t *conformance.T) {
	pl := []plug{{name: "writer", caps: &abkitv1.Capabilities{ReadsBody: true, WritesResponseBody: true}}}
	calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(sseFrames(2), false))}}.run(t, "P18")
	t.Diff("P18", "calls", []string{"writer.request", "writer.response"}, seq(calls))
	if e := res.GetExchanges(); len(e) == 1 && e[0].GetStreamed() {
		t.Errorf("P18", "the response was streamed although a plugin writes the response body")
	}
}

func p25MidStreamReject(t *conformance.T) {
	pl := chain(3, "stream")
	pl[2].script = on("frame", 1, reject(403, "bad frame"))
	frames := sseFrames(3)
	calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(frames, false))}}.run(t, "P25")
	want := cat(each(names(3), "request"), each(rev(names(3)), "frame0"), []string{"p2.frame1"}, each(rev(names(3)), "last"))
	t.Diff("P25", "calls", want, seq(calls))
	if e := res.GetExchanges(); len(e) == 1 {
		if e[0].GetOutcome().GetKind() != "deny" || e[0].GetOutcome().GetDeniedBy() != "p2" {
			t.Errorf("P25", "outcome %v; want deny by p2", e[0].GetOutcome())
		}
		want, alt := frames[0], t.Alternative("P25.rejecting-frame")
		if alt == "relayed" {
			want += frames[1]
		}
		if !relayed(t, e[0].GetBody(), want) {
			t.ChoiceErrorf("P25.rejecting-frame", "P25", "client body %q; want %q (the rejecting frame %s)", e[0].GetBody(), want, alt)
		}
	}
}

func p25MidStreamRejectSplitFrame(t *conformance.T) {
	pl := chain(1, "stream")
	pl[0].script = on("frame", 1, reject(403, "bad frame"))
	f := sseFrames(3)
	chunks := []string{f[0] + f[1][:4], f[1][4:] + f[2][:5]}
	_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(chunks, false))}}.run(t, "P25")
	e := res.GetExchanges()
	if len(e) != 1 {
		t.Fatalf("P25", "%d exchange results; want 1", len(e))
	}
	want, alt := f[0], t.Alternative("P25.rejecting-frame")
	if alt == "relayed" {
		want += f[1]
	}
	if !relayed(t, e[0].GetBody(), want) {
		t.ChoiceErrorf("P25.rejecting-frame", "P25", "client body %q; want %q (the rejecting frame %s, nothing of the rest)", e[0].GetBody(), want, alt)
	}
	for _, w := range e[0].GetWarnings() {
		if w.GetRule() == "P19" {
			t.Errorf("P19", "a stream stopped by a reject was warned about as unterminated: %v", w)
		}
	}
	if e[0].GetOutcome().GetKind() != "deny" {
		t.Errorf("P25", "outcome %v; want deny", e[0].GetOutcome())
	}
}

func p22JsonPanicInTheOneFrame(t *conformance.T) {
	pl := []plug{{name: "s", behaviours: []string{"stream"}, script: on("frame", -1, &abkitv1.ProbeReply{Panic: true})}}
	calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{"ok":true}`))}}.run(t, "P22")
	t.Diff("P21", "calls", []string{"s.request", "s.last"}, seq(calls))
	if e := res.GetExchanges(); len(e) != 1 || e[0].GetOutcome().GetKind() != "error" || e[0].GetStatus() != 500 {
		t.Errorf("P22", "exchange result %v; want an error outcome with status 500", e)
	}
}

func p20StreamFrameCountAndBody(t *conformance.T) {
	body := strings.Join(sseFrames(5), "")
	chunks := []string{body[:3], body[3:20], body[20:21], body[21:]}
	calls, res := pipe{plugs: chain(2, "stream"), exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(chunks, false))}}.run(t, "P19")
	for _, p := range names(2) {
		var got []string
		for _, c := range calls {
			if c.Probe == p && c.Hook == "frame" && !c.Last {
				got = append(got, c.Frame)
			}
		}
		t.ChoiceDiff("P19.frame", "P19", p+" frames", framesAs(t, sseFrames(5)), got)
	}
	if e := res.GetExchanges(); len(e) == 1 {
		if !relayed(t, e[0].GetBody(), body) {
			t.ChoiceErrorf("P19.relay", "P19", "client body %q; want %q relayed as %s", e[0].GetBody(), body, t.Alternative("P19.relay"))
		}
		if e[0].GetFrames() != 5 {
			t.Errorf("P19", "frames %d; want 5", e[0].GetFrames())
		}
	}
}

// streamCase is one stream of the P20 order cases: its frames and whether
// it ends early.
type streamCase struct {
	name  string
	n     int
	early bool
}

// sseShape is one event-stream shape: the chunks the upstream sends,
// the frames a plugin must get and whether the runtime warns.
type sseShape struct {
	name, summary string
	ct            string // Content-Type; empty: text/event-stream
	chunks        []string
	frames        []string
	warn          bool
}

// sseShapes are the event-stream shapes of recorded traffic, written anew.
var sseShapes = []sseShape{
	{"crlf", "CRLF line ends", "", []string{"data: a\r\n\r\ndata: b\r\n\r\n"}, []string{"data: a\r\n\r\n", "data: b\r\n\r\n"}, false},
	{"cr", "bare CR line ends (the last frame waits for the end)", "", []string{"data: a\r\r", "data: b\r\r"}, []string{"data: a\r\r", "data: b\r\r"}, false},
	{"crlf-split", "a CRLF split across chunks is one line end", "", []string{"data: a\r", "\n\r", "\ndata: b\n\n"}, []string{"data: a\r\n\r\n", "data: b\n\n"}, false},
	{"comments", "comment-only blocks relayed, not dispatched", "", []string{": ping\n\ndata: a\n\n: keep-alive\n\n"}, []string{"data: a\n\n"}, false},
	{"multi-line-data", "several data lines are one frame", "", []string{"data: a\ndata: b\ndata\n\n"}, []string{"data: a\ndata: b\ndata\n\n"}, false},
	{"fields", "event, id and retry fields; field-only blocks not dispatched", "", []string{"event: e\nid: 7\nretry: 100\ndata: x\n\nid: 8\n\nretry: 5\n\n"}, []string{"event: e\nid: 7\nretry: 100\ndata: x\n\n"}, false},
	{"data-prefix", "dataX: is not a data line; data without a colon is", "", []string{"dataX: y\n\ndata\n\n"}, []string{"data\n\n"}, false},
	{"stray-blank-lines", "blank lines alone are blocks, not frames", "", []string{"\n\ndata: a\n\n\n"}, []string{"data: a\n\n"}, false},
	{"charset", "text/event-stream; charset=utf-8 is an event stream", "text/event-stream; charset=utf-8", []string{"data: a\n\n"}, []string{"data: a\n\n"}, false},
	{"media-type-case", "media types compare case-insensitively", "Text/Event-Stream", []string{"data: a\n\n"}, []string{"data: a\n\n"}, false},
	{"empty", "an empty stream: no frame, one last call", "", []string{""}, nil, false},
	{"unterminated", "a final block without a blank line is relayed and warned about", "", []string{"data: a\n\ndata: b"}, []string{"data: a\n\n"}, true},
	{"cr-then-comment", "a comment block after a held CR frame is not a frame", "", []string{"data: a\r\r", ": ping\r\r"}, []string{"data: a\r\r"}, false},
	{"split-then-comment", "a comment block after a frame split across chunks is not a frame", "", []string{"data: a\n", "\n", ": c\n\n"}, []string{"data: a\n\n"}, false},
	{"bom", "a leading BOM is relayed as part of the first frame", "", []string{"\xef\xbb\xbfdata: a\n\n"}, []string{"\xef\xbb\xbfdata: a\n\n"}, false},
}
