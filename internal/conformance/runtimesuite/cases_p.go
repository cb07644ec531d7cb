package runtimesuite

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

func needP(d *conformance.Descriptor) string {
	if !d.Has(conformance.FamilyP) {
		return "the runtime does not host family P"
	}
	return ""
}

func pcase(id string, rules []string, summary, explain string, run func(t *conformance.T)) *conformance.Case {
	return &conformance.Case{ID: id, Rules: rules, Summary: summary, Explain: explain, Applies: needP, Run: run}
}

// choice makes c a check of choice point id (its reference alternative,
// or alt when given): see conformance.Judge.
func choice(id string, c *conformance.Case, alt ...string) *conformance.Case {
	c.Choice = id
	if len(alt) > 0 {
		c.Alternative = alt[0]
	}
	return c
}

func addPipelineCases(r *conformance.Registry) {
	addPipelineResultCases(r)
	addHeaderCases(r)
	// P15, P16, P26, P27: order of request, response and finish, with and
	// without a denier, for 1, 6 and 20 plugins.
	for _, n := range []int{1, 6, 20} {
		for _, d := range []struct {
			name string
			at   int // -1: nobody denies
		}{{"allow", -1}, {"deny-first", 0}, {"deny-middle", n / 2}, {"deny-last", n - 1}} {
			if n == 1 && d.name == "deny-middle" {
				continue
			}
			n, at := n, d.at
			r.Add(pcase(fmt.Sprintf("P15/order/%d-plugins/%s", n, d.name), []string{"P15", "P16", "P26", "P27"},
				fmt.Sprintf("%d plugins, %s: OnRequest forward, OnResponse reverse, OnFinish LIFO incl. the denier", n, d.name),
				"Runs one exchange through a chain of finishing probes and compares the call sequence with the model: OnRequest in declaration order up to the denier; OnResponse in reverse order only when allowed; OnFinish in reverse order on every plugin whose OnRequest ran, the denier included. A failure shows the -want +got sequence: a runtime that iterates the response or finish phase forwards, or forgets the denier, differs here.",
				func(t *conformance.T) {
					pl := chain(n, "finish")
					if at >= 0 {
						pl[at].script = on("request", -1, reject(403, "denied by probe"))
					}
					calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P15")
					ran := names(n)
					if at >= 0 {
						ran = ran[:at+1]
					}
					want := cat(each(ran, "request"))
					if at < 0 {
						want = cat(want, each(rev(ran), "response"))
					}
					want = cat(want, each(rev(ran), "finish"))
					rule := "P15"
					got := seq(calls)
					switch {
					case !slices.Equal(seq(calls, "request"), each(ran, "request")):
						rule = "P15"
					case !slices.Equal(seq(calls, "response"), want[len(ran):len(want)-len(ran)]):
						rule = "P16"
					case !slices.Equal(seq(calls, "finish"), each(rev(ran), "finish")):
						rule = "P27"
						if len(seq(calls, "finish")) != len(ran) {
							rule = "P26"
						}
					}
					t.Diff(rule, "hook call sequence", want, got)
					if len(res.GetExchanges()) == 1 {
						o := res.Exchanges[0].GetOutcome()
						if at >= 0 && (o.GetKind() != "deny" || o.GetDeniedBy() != fmt.Sprintf("p%d", at) || res.Exchanges[0].GetStatus() != 403) {
							t.Errorf("P15", "outcome %v, client status %d; want a deny by p%d with status 403", o, res.Exchanges[0].GetStatus(), at)
						}
					}
				}))
		}
	}

	r.Add(pcase("P15/cancel/before-chain", []string{"P15", "P26"}, "a request cancelled before the chain is denied as cancelled; no OnRequest, no OnFinish",
		"Starts an exchange whose client context is already cancelled. No plugin may run OnRequest (and so none finishes), and the outcome must be a deny the runtime recognises as a cancellation.",
		func(t *conformance.T) {
			ex := exchange(jsonUpstream(`{}`))
			ex.Cancelled = true
			calls, res := pipe{plugs: chain(3, "finish"), exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P15")
			t.Diff("P15", "calls of a cancelled request", []string(nil), seq(calls))
			if e := res.GetExchanges(); len(e) != 1 || e[0].GetOutcome().GetKind() != "deny" || !e[0].GetCancelled() {
				t.Errorf("P15", "want a deny recognisable as cancellation, got %v", e)
			}
		}))
	r.Add(pcase("P15/cancel/mid-chain", []string{"P15", "P26", "P28"}, "a client gone during p1's OnRequest: p2 never runs; p1, p0 finish with a live context",
		"The second probe cancels the client context from inside its OnRequest. The third probe's OnRequest must not run; the exchange is denied as cancelled; the two plugins whose OnRequest ran still finish, with a context that is not cancelled (P28).",
		func(t *conformance.T) {
			pl := chain(3, "finish")
			pl[1].script = on("request", -1, &abkitv1.ProbeReply{CancelClient: true})
			calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P15")
			t.Diff("P15", "calls", []string{"p0.request", "p1.request", "p1.finish", "p0.finish"}, seq(calls))
			for _, c := range calls {
				if c.Hook == "finish" && c.CtxDone {
					t.Errorf("P28", "%s finished with a cancelled context: the finish context must not derive from the request", c.Probe)
				}
			}
			if e := res.GetExchanges(); len(e) != 1 || !e[0].GetCancelled() {
				t.Errorf("P15", "want the exchange denied as cancelled, got %v", e)
			}
		}))
	r.Add(pcase("P16/upstream-error/no-response", []string{"P16", "P26", "P29"}, "upstream did not answer: no OnResponse, every plugin finishes with an error outcome",
		"The upstream fails. OnResponse runs only when the upstream answered, so no plugin gets it; every plugin still finishes and sees an error outcome.",
		func(t *conformance.T) {
			ex := exchange(&abkitv1.UpstreamSpec{Error: "connection refused"})
			calls, _ := pipe{plugs: chain(3, "finish"), exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P16")
			t.Diff("P16", "calls", []string{"p0.request", "p1.request", "p2.request", "p2.finish", "p1.finish", "p0.finish"}, seq(calls))
			for _, c := range calls {
				if c.Hook == "finish" && c.Outcome.GetKind() != "error" {
					t.Errorf("P29", "%s saw outcome %v; want error", c.Probe, c.Outcome)
				}
			}
		}))

	// P19–P23: frames, frame order, one last call, one path per plugin.
	for _, n := range []int{1, 6, 20} {
		for _, fr := range []struct {
			name  string
			n     int
			early bool
		}{{"zero-frames", 0, false}, {"one-frame", 1, false}, {"three-frames", 3, false}, {"early-end", 2, true}} {
			n, fr := n, fr
			r.Add(pcase(fmt.Sprintf("P20/stream/%d-plugins/%s", n, fr.name), []string{"P19", "P20", "P21", "P23", "P27"},
				fmt.Sprintf("%d streaming plugins, %s: each frame to all in reverse order before the next; one last call each", n, fr.name),
				"Streams an SSE response through a chain of streaming, finishing probes. Each frame must reach every plugin in reverse declaration order before the next frame reaches any; then each plugin gets exactly one last=true call with an empty frame (also for zero frames and an early end); no plugin gets OnResponse; then OnFinish in reverse order.",
				func(t *conformance.T) {
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
				}))
		}
	}
	r.Add(pcase("P21/cancel/mid-stream", []string{"P15", "P20", "P21", "P26", "P28"}, "a client gone during frame 1: no later frame, exactly one last call each, finish with a fresh context",
		"Three streaming, finishing probes get a five-event stream; the first to get each frame (p2) cancels the client's context while handling frame 1. No frame after frame 1 may be dispatched to anyone (frame 1 itself may or may not reach the others); every streaming plugin still gets exactly one last=true call; every plugin finishes, in LIFO order, with a context that is not cancelled and has a deadline; the exchange does not end as a plain allow.",
		func(t *conformance.T) {
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
		}))
	r.Add(pcase("P19/split/every-byte", []string{"P19", "P20"}, "two SSE events split into two chunks at every byte: the same frames each time",
		"Sends the same two-event stream split into two chunks at every byte offset. Every split must yield exactly the two complete events as frames, byte for byte.",
		func(t *conformance.T) {
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
		}))
	// P18/P19 over the shapes real event streams take: line ends, comments,
	// fields, multi-line data, charset parameters, empty and unterminated
	// streams. Frames are the dispatched blocks, byte for byte; the client
	// gets every byte, dispatched or not.
	for _, sh := range sseShapes {
		sh := sh
		r.Add(pcase("P19/shape/"+sh.name, []string{"P19", "P18", "P21"}, "event stream shape "+sh.name+": "+sh.summary,
			"Streams the shape through two streaming probes. Each must get exactly the blocks with a data line as frames (raw bytes, terminator included), in order, then one last=true call; the client must get every byte of the stream, streamed; an unterminated final block is relayed, not dispatched, and warned about (P19).",
			func(t *conformance.T) {
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
			}))
	}
	r.Add(pcase("P22/json/one-last-frame", []string{"P22", "P23"}, "a JSON response: one OnResponseFrame(whole body, last=true) per streamer; OnResponse for the others",
		"A non-streamed response must reach each streaming plugin as exactly one frame call carrying the whole body with last=true, and never as OnResponse; a non-streaming plugin gets OnResponse and no frames.",
		func(t *conformance.T) {
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
		}))
	r.Add(pcase("P23/sse/non-streamer-nothing", []string{"P23", "P18"}, "a streamed response: a non-streaming plugin gets neither frames nor OnResponse",
		"Streams two events through a chain of a non-streaming and a streaming plugin (no body writer, so the response is relayed frame by frame). The non-streaming plugin gets no response-side call; the streamer gets no OnResponse.",
		func(t *conformance.T) {
			pl := []plug{{name: "plain"}, {name: "streamer", behaviours: []string{"stream"}}}
			calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(sseFrames(2), false))}}.run(t, "P23")
			t.Diff("P23", "calls", []string{"plain.request", "streamer.request", "streamer.frame0", "streamer.frame1", "streamer.last"}, seq(calls))
			if e := res.GetExchanges(); len(e) == 1 && !e[0].GetStreamed() {
				t.Errorf("P18", "an event stream with no response-body writer must be streamed")
			}
		}))
	r.Add(pcase("P18/buffered-with-writer", []string{"P18"}, "an event stream with a response-body writer in the chain is buffered: OnResponse runs",
		"With a plugin declaring writes_response_body, the runtime buffers the stream and runs the response hooks: the writer gets OnResponse and the result is not streamed.",
		func(t *conformance.T) {
			pl := []plug{{name: "writer", caps: &abkitv1.Capabilities{ReadsBody: true, WritesResponseBody: true}}}
			calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(sseUpstream(sseFrames(2), false))}}.run(t, "P18")
			t.Diff("P18", "calls", []string{"writer.request", "writer.response"}, seq(calls))
			if e := res.GetExchanges(); len(e) == 1 && e[0].GetStreamed() {
				t.Errorf("P18", "the response was streamed although a plugin writes the response body")
			}
		}))
	r.Add(pcase("P25/mid-stream-reject", []string{"P25", "P21"}, "a reject at frame 1 stops that frame's dispatch and the stream; the client keeps frame 0",
		"Three streaming plugins; the last in declaration order (first to get each frame) rejects frame 1. Frame 1 reaches no other plugin, no later frame is dispatched, each plugin still gets one last call, the outcome is a deny by that plugin and the client body holds only frame 0.",
		func(t *conformance.T) {
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
		}))

	// Finish: P28–P30.
	r.Add(pcase("P28/fresh-context/client-gone", []string{"P28"}, "the client goes away during OnResponse: OnFinish still gets a live context with a deadline",
		"The client context is cancelled from inside the last OnResponse. Every OnFinish must get a fresh context: not cancelled, with a deadline of at most the finish timeout (2 s by default).",
		func(t *conformance.T) {
			pl := chain(2, "finish")
			pl[0].script = on("response", -1, &abkitv1.ProbeReply{CancelClient: true})
			calls, _ := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P28")
			n := 0
			for _, c := range calls {
				if c.Hook != "finish" {
					continue
				}
				n++
				if c.CtxDone {
					t.Errorf("P28", "%s: OnFinish context is cancelled (it derives from the request context)", c.Probe)
				}
				if c.Deadline <= 0 || c.Deadline > 2*time.Second+50*time.Millisecond {
					t.Errorf("P28", "%s: OnFinish deadline in %v; want a host-set deadline of at most 2s", c.Probe, c.Deadline)
				}
			}
			if n != 2 {
				t.Errorf("P26", "%d OnFinish calls; want 2", n)
			}
		}))
	r.Add(pcase("P29/outcome/only-in-finish", []string{"P29"}, "the outcome is absent during request and response, present in finish with kind, status and denier",
		"Two exchanges, one allowed and one denied by p1. Hooks before finish must see no outcome; OnFinish sees allow/200, then deny/403 with denied_by p1.",
		func(t *conformance.T) {
			pl := chain(2, "finish")
			pl[1].script = func(c *Call) *abkitv1.ProbeReply {
				if c.Hook == "request" && c.Exchange == 1 {
					return reject(403, "no")
				}
				return nil
			}
			calls, _ := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`)), exchange(jsonUpstream(`{}`))}}.run(t, "P29")
			for _, c := range calls {
				switch {
				case c.Hook != "finish" && c.Outcome != nil:
					t.Errorf("P29", "%s.%s saw an outcome %v; it must be absent before finish", c.Probe, c.Hook, c.Outcome)
				case c.Hook == "finish" && c.Outcome == nil:
					t.Errorf("P29", "%s.finish saw no outcome", c.Probe)
				case c.Hook == "finish" && c.Exchange == 0 && (c.Outcome.GetKind() != "allow" || c.Outcome.GetStatus() != 200):
					t.Errorf("P29", "%s.finish of the allowed exchange saw %v; want allow 200", c.Probe, c.Outcome)
				case c.Hook == "finish" && c.Exchange == 1 && (c.Outcome.GetKind() != "deny" || c.Outcome.GetStatus() != 403 || c.Outcome.GetDeniedBy() != "p1"):
					t.Errorf("P29", "%s.finish of the denied exchange saw %v; want deny 403 by p1", c.Probe, c.Outcome)
				}
			}
		}))
	for _, f := range []struct {
		name  string
		reply *abkitv1.ProbeReply
	}{{"panic", &abkitv1.ProbeReply{Panic: true}}, {"error", &abkitv1.ProbeReply{Error: "finish failed"}},
		{"slow", &abkitv1.ProbeReply{SleepNs: int64(900 * time.Millisecond)}}} {
		f := f
		r.Add(pcase("P30/best-effort/"+f.name, []string{"P30", "P27"}, "a finisher that "+f.name+"s does not keep the next (LIFO) one from finishing",
			"The middle of three finishers fails ("+f.name+"; the slow one overruns a 100 ms finish deadline). The runtime recovers or abandons it and still finishes the plugin before it, in LIFO order, and the exchange result comes back.",
			func(t *conformance.T) {
				pl := chain(3, "finish")
				pl[1].script = on("finish", -1, f.reply)
				calls, res := pipe{plugs: pl, finishTO: int64(100 * time.Millisecond), exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P30")
				t.Diff("P30", "finish calls", []string{"p2.finish", "p1.finish", "p0.finish"}, seq(calls, "finish"))
				if len(res.GetExchanges()) != 1 {
					t.Errorf("P30", "no exchange result")
				}
			}))
	}
	r.Add(pcase("P30/writes-during-finish", []string{"P30", "P17"}, "a body write during OnFinish is dropped with a warning",
		"The declared response-body writer writes during OnFinish. The client's body must stay as it was and the runtime must report a warning.",
		func(t *conformance.T) {
			pl := []plug{{name: "w", caps: &abkitv1.Capabilities{ReadsBody: true, WritesResponseBody: true}, behaviours: []string{"finish"},
				script: on("finish", -1, &abkitv1.ProbeReply{WriteResponseBody: true, Body: []byte("late")})}}
			_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{"a":1}`))}}.run(t, "P30")
			if e := res.GetExchanges(); len(e) == 1 {
				if string(e[0].GetBody()) != `{"a":1}` {
					t.Errorf("P30", "client body %q; a write during finish must not reach it", e[0].GetBody())
				}
				if len(e[0].GetWarnings()) == 0 {
					t.Errorf("P30", "no warning for the dropped write")
				}
			}
		}))
	r.Add(pcase("P30/finish-twice", []string{"P30", "P26"}, "finishing an exchange twice calls no finisher again and warns",
		"The runtime is asked to finish the exchange a second time; OnFinish must have run exactly once per plugin and the second finish must add a warning.",
		func(t *conformance.T) {
			ex := exchange(jsonUpstream(`{}`))
			ex.FinishTwice = true
			calls, res := pipe{plugs: chain(2, "finish"), exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P30")
			t.Diff("P26", "finish calls", []string{"p1.finish", "p0.finish"}, seq(calls, "finish"))
			if e := res.GetExchanges(); len(e) == 1 && len(e[0].GetWarnings()) == 0 {
				t.Errorf("P30", "no warning for the second finish")
			}
		}))
	r.Add(pcase("P31/state/per-exchange", []string{"P31"}, "state set in OnRequest is read back in later hooks and never seen by the next exchange",
		"Each probe stores state in OnRequest; later hooks of the exchange must see it, and the next exchange's OnRequest must see none.",
		func(t *conformance.T) {
			pl := chain(2, "finish")
			for i := range pl {
				pl[i].script = func(c *Call) *abkitv1.ProbeReply {
					if c.Hook == "request" {
						return &abkitv1.ProbeReply{SetState: true, State: fmt.Sprintf("ex%d", c.Exchange)}
					}
					return nil
				}
			}
			calls, _ := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`)), exchange(jsonUpstream(`{}`))}}.run(t, "P31")
			for _, c := range calls {
				want := fmt.Sprintf("ex%d", c.Exchange)
				switch {
				case c.Hook == "request" && c.State != nil:
					t.Errorf("P31", "%s.request of exchange %d saw state %q: state leaked between exchanges", c.Probe, c.Exchange, *c.State)
				case c.Hook != "request" && (c.State == nil || *c.State != want):
					t.Errorf("P31", "%s.%s of exchange %d saw state %v; want %q", c.Probe, c.Hook, c.Exchange, c.State, want)
				}
			}
		}))
	r.Add(pcase("P11/bodies/nil-without-reader", []string{"P11"}, "without a body reader plugins see no request body; with one they do",
		"Two chains get a request with a body: with no plugin reading bodies the hook must see nil; with a reader it sees the body.",
		func(t *conformance.T) {
			ex := &abkitv1.ExchangeSpec{Request: &abkitv1.HTTPRequest{Method: "POST", Url: "http://u/", HasBody: true, Body: []byte("hello")}, Upstream: jsonUpstream(`{}`)}
			calls, _ := pipe{plugs: chain(1), exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P11")
			for _, c := range calls {
				if c.Hook == "request" && c.ReqBody != nil {
					t.Errorf("P11", "no plugin reads bodies, yet OnRequest saw body %q", *c.ReqBody)
				}
			}
			calls, _ = pipe{plugs: []plug{{name: "r", caps: &abkitv1.Capabilities{ReadsBody: true}}}, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P11")
			for _, c := range calls {
				if c.Hook == "request" && (c.ReqBody == nil || *c.ReqBody != "hello") {
					t.Errorf("P11", "a body reader saw %v; want %q", c.ReqBody, "hello")
				}
			}
		}))
	r.Add(pcase("P4/normalise/write-implies-read", []string{"P4", "P11"}, "a writer that does not declare reads_body still gets the bodies it may write",
		"A plugin declaring writes_request_body (then one declaring writes_response_body) without reads_body is the only plugin of the chain. By P4 the runtime must treat it as a body reader before anything reads the capabilities, so its OnRequest sees the request body and the response writer's OnResponse sees the response body. A runtime that reads the raw flags sees no reader and hands out no bodies.",
		func(t *conformance.T) {
			ex := &abkitv1.ExchangeSpec{Request: &abkitv1.HTTPRequest{Method: "POST", Url: "http://u/", HasBody: true, Body: []byte("hello")}, Upstream: jsonUpstream(`{"r":1}`)}
			for _, c := range []struct {
				name string
				caps *abkitv1.Capabilities
			}{{"req-writer", &abkitv1.Capabilities{WritesRequestBody: true}}, {"resp-writer", &abkitv1.Capabilities{WritesResponseBody: true}}} {
				calls, _ := pipe{plugs: []plug{{name: c.name, caps: c.caps}}, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P4")
				sawReq, sawResp := false, false
				for _, k := range calls {
					if k.Hook == "request" {
						sawReq = true
						if k.ReqBody == nil || *k.ReqBody != "hello" {
							t.Errorf("P4", "%s (writes without reads_body) saw request body %v in OnRequest; want %q: a write capability implies reads_body", c.name, k.ReqBody, "hello")
						}
					}
					if k.Hook == "response" && c.name == "resp-writer" {
						sawResp = true
						if k.RespBody == nil || *k.RespBody != `{"r":1}` {
							t.Errorf("P4", "%s saw response body %v in OnResponse; want %q", c.name, k.RespBody, `{"r":1}`)
						}
					}
				}
				if !sawReq || (c.name == "resp-writer" && !sawResp) {
					t.Errorf("P4", "%s: calls %v; want OnRequest (and OnResponse for the response writer)", c.name, seq(calls))
				}
			}
		}))
	r.Add(pcase("P17/body-write/declared-only", []string{"P17"}, "only the declared request writer's change reaches upstream",
		"An undeclared plugin writes the request body (refused, warned); then the declared writer writes it (reaches upstream).",
		func(t *conformance.T) {
			ex := &abkitv1.ExchangeSpec{Request: &abkitv1.HTTPRequest{Method: "POST", Url: "http://u/", HasBody: true, Body: []byte("orig")}, Upstream: jsonUpstream(`{}`)}
			pl := []plug{{name: "rogue", caps: &abkitv1.Capabilities{ReadsBody: true}, script: on("request", -1, &abkitv1.ProbeReply{WriteRequestBody: true, Body: []byte("rogue")})}}
			_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P17")
			if e := res.GetExchanges(); len(e) == 1 && (string(e[0].GetRequestBody()) != "orig" || len(e[0].GetWarnings()) == 0) {
				t.Errorf("P17", "undeclared write: upstream body %q (want \"orig\"), %d warnings (want ≥1)", e[0].GetRequestBody(), len(e[0].GetWarnings()))
			}
			pl = []plug{{name: "w", caps: &abkitv1.Capabilities{ReadsBody: true, WritesRequestBody: true}, script: on("request", -1, &abkitv1.ProbeReply{WriteRequestBody: true, Body: []byte("new")})}}
			_, res = pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{ex}}.run(t, "P17")
			if e := res.GetExchanges(); len(e) == 1 && string(e[0].GetRequestBody()) != "new" {
				t.Errorf("P17", "the declared writer's body did not reach upstream: %q", e[0].GetRequestBody())
			}
		}))

	// Lifecycle P12–P14.
	r.Add(pcase("P12/init/order-and-stop", []string{"P12", "P13"}, "Init in order, the first error stops start-up; Stop shuts down the started plugins in reverse",
		"Four lifecycle probes, the third fails Init. Init must run on p0, p1, p2 in order and not on p3; start-up fails naming p2; Shutdown runs in reverse on the plugins before the failure.",
		func(t *conformance.T) {
			pl := chain(4, "init", "shutdown", "ready")
			pl[2].script = on("init", -1, &abkitv1.ProbeReply{Error: "init broke"})
			calls, res := pipe{plugs: pl, start: true, stop: true}.run(t, "P12")
			t.Diff("P12", "init calls", []string{"p0.init", "p1.init", "p2.init"}, seq(calls, "init"))
			if !strings.Contains(res.GetStartError(), "p2") {
				t.Errorf("P12", "start error %q does not name p2", res.GetStartError())
			}
			t.Diff("P13", "shutdown calls", []string{"p1.shutdown", "p0.shutdown"}, seq(calls, "shutdown"))
		}))
	r.Add(pcase("P13/shutdown/reverse-errors-continue", []string{"P13"}, "Shutdown runs once each in reverse; an error is reported and the rest still shut down",
		"Three lifecycle probes start cleanly; the middle one fails Shutdown. All three shut down in reverse order and the stop error is reported.",
		func(t *conformance.T) {
			pl := chain(3, "init", "shutdown", "ready")
			pl[1].script = on("shutdown", -1, &abkitv1.ProbeReply{Error: "shutdown broke"})
			calls, res := pipe{plugs: pl, start: true, stop: true, stopTO: int64(time.Second)}.run(t, "P13")
			t.Diff("P13", "shutdown calls", []string{"p2.shutdown", "p1.shutdown", "p0.shutdown"}, seq(calls, "shutdown"))
			if res.GetStopError() == "" {
				t.Errorf("P13", "the shutdown error was not reported")
			}
		}))
	r.Add(pcase("P14/ready/all-and-concurrent", []string{"P14"}, "ready when every reporting plugin is ready; plugins without readiness count as ready",
		"A chain of a plain plugin and two readiness probes, one not ready, is asked Ready 8 times concurrently: every answer is not ready.",
		func(t *conformance.T) {
			pl := append(chain(1), chain(2, "init", "shutdown", "ready")...)
			pl[1].name, pl[2].name = "r1", "r2"
			pl[2].script = on("ready", -1, &abkitv1.ProbeReply{Error: "warming up"})
			_, res := pipe{plugs: pl, ready: 8}.run(t, "P14")
			if len(res.GetReadyErrors()) != 8 {
				t.Fatalf("P14", "%d ready answers; want 8", len(res.GetReadyErrors()))
			}
			for _, e := range res.GetReadyErrors() {
				if e == "" {
					t.Errorf("P14", "the chain reported ready although r2 is not")
				}
			}
			_, res = pipe{plugs: chain(2), ready: 4}.run(t, "P14")
			for _, e := range res.GetReadyErrors() {
				if e != "" {
					t.Errorf("P14", "plugins without readiness must count as ready, got %q", e)
				}
			}
		}))

	// Build checks P1 (two entries of one name, an entry naming no plugin)
	// and P6–P11: every misconfiguration, all errors reported.
	w := &abkitv1.Capabilities{ReadsBody: true, WritesResponseBody: true}
	wOnly := &abkitv1.Capabilities{WritesResponseBody: true} // reads_body by P4 only
	for _, b := range []struct {
		name    string
		plugs   []plug
		entries []string // plugin names; "name:cfg" adds a config, "name!off" off
		mode    string
		want    []string // rule(plugin), sorted
		choice  string   // the choice point the check follows, if any
	}{
		{"P1/duplicate-name", []plug{{name: "a"}}, []string{"a", "a"}, "", []string{"P1(a)"}, "P1.names"},
		{"P1/empty-name", []plug{{name: "a"}}, []string{"a", ""}, "", []string{"P1()"}, "P1.names"},
		{"P1/all-errors", []plug{{name: "a"}, {name: "b"}}, []string{"a", "b", "a", "", "ghost", "b"}, "", []string{"P1()", "P1(a)", "P1(b)", "P6(ghost)"}, "P6.build-errors"},
		{"P7/joined", []plug{{name: "a", caps: &abkitv1.Capabilities{Requires: []string{"x"}}}, {name: "b", caps: &abkitv1.Capabilities{RequiresAny: []string{"y"}}}}, []string{"a", "b"}, "", []string{"P7(a)", "P8(b)"}, ""},
		{"P6/unknown-name", []plug{{name: "a"}}, []string{"a", "ghost"}, "", []string{"P6(ghost)"}, ""},
		{"P6/config-without-schema", []plug{{name: "a"}}, []string{"a:{\"x\":1}"}, "", []string{"P6(a)"}, ""},
		{"P6/off-dropped", []plug{{name: "a"}}, []string{"a", "ghost!off"}, "", nil, ""},
		{"P6/all-errors", []plug{{name: "a"}, {name: "b", caps: &abkitv1.Capabilities{Requires: []string{"zz"}}}}, []string{"ghost", "a:{\"x\":1}", "b"}, "", []string{"P6(a)", "P6(ghost)", "P7(b)"}, "P6.build-errors"},
		{"P7/missing", []plug{{name: "a", caps: &abkitv1.Capabilities{Requires: []string{"b"}}}}, []string{"a"}, "", []string{"P7(a)"}, ""},
		{"P7/late", []plug{{name: "a", caps: &abkitv1.Capabilities{Requires: []string{"b"}}}, {name: "b"}}, []string{"a", "b"}, "", []string{"P7(a)"}, ""},
		{"P8/none-present", []plug{{name: "a", caps: &abkitv1.Capabilities{RequiresAny: []string{"b", "c"}}}}, []string{"a"}, "", []string{"P8(a)"}, ""},
		{"P8/present-late", []plug{{name: "a", caps: &abkitv1.Capabilities{RequiresAny: []string{"b", "c"}}}, {name: "b"}, {name: "c"}}, []string{"b", "a", "c"}, "", []string{"P8(a)"}, ""},
		{"P9/two-writers", []plug{{name: "w1", caps: wOnly}, {name: "w2", caps: wOnly}}, []string{"w1", "w2"}, "", []string{"P9(w2)"}, ""},
		{"P9/reader-after-writer", []plug{{name: "w1", caps: w}, {name: "r", caps: &abkitv1.Capabilities{ReadsBody: true}}}, []string{"w1", "r"}, "", []string{"P9(r)"}, ""},
		{"P10/waypoint-writer", []plug{{name: "w1", caps: w}}, []string{"w1"}, "waypoint", []string{"P10(w1)"}, ""},
		// Valid chains next to the invalid ones: a runtime that rejects
		// too much is as wrong as one that accepts too much.
		{"P1/accept/names-differ-in-case", []plug{{name: "a"}, {name: "A"}}, []string{"a", "A"}, "", nil, ""},
		{"P6/accept/null-config", []plug{{name: "a", schema: `{"type":"object"}`}}, []string{"a:null"}, "", nil, ""},
		{"P6/accept/empty-config", []plug{{name: "a", schema: `{"type":"object"}`}}, []string{"a:"}, "", nil, ""},
		{"P6/accept/config-with-schema", []plug{{name: "a", schema: `{"type":"object"}`}}, []string{`a:{"x":1}`}, "", nil, ""},
		{"P6/accept/on-error-spellings", []plug{{name: "a"}, {name: "b"}, {name: "c"}}, []string{"a@observe", "b@enforce", "c@"}, "", nil, ""},
		{"P6/unknown-on-error", []plug{{name: "a"}}, []string{"a@ignore"}, "", []string{"P6(a)"}, ""},
		{"P7/accept/present-earlier", []plug{{name: "a", caps: &abkitv1.Capabilities{Requires: []string{"b"}}}, {name: "b"}}, []string{"b", "a"}, "", nil, ""},
		{"P8/accept/one-of-several", []plug{{name: "a", caps: &abkitv1.Capabilities{RequiresAny: []string{"b", "c", "d"}}}, {name: "c"}}, []string{"c", "a"}, "", nil, ""},
		{"P9/accept/writer-each-direction", []plug{{name: "wq", caps: &abkitv1.Capabilities{WritesRequestBody: true}}, {name: "wr", caps: wOnly}}, []string{"wq", "wr"}, "", nil, ""},
		{"P9/accept/reader-before-writer", []plug{{name: "r", caps: &abkitv1.Capabilities{ReadsBody: true}}, {name: "w1", caps: w}}, []string{"r", "w1"}, "", nil, ""},
		{"P9/accept/off-writer", []plug{{name: "w1", caps: wOnly}, {name: "w2", caps: wOnly}}, []string{"w1", "w2!off"}, "", nil, ""},
		{"P9/accept/writer-each-direction-reversed", []plug{{name: "wq", caps: &abkitv1.Capabilities{WritesRequestBody: true}}, {name: "wr", caps: wOnly}}, []string{"wr", "wq"}, "", nil, ""},
		{"P6/config-without-schema-still-present", []plug{{name: "a"}, {name: "b", caps: &abkitv1.Capabilities{Requires: []string{"a"}}}}, []string{`a:{"x":1}`, "b"}, "", []string{"P6(a)"}, ""},
		{"P10/accept/waypoint-reader", []plug{{name: "r", caps: &abkitv1.Capabilities{ReadsBody: true}}}, []string{"r"}, "waypoint", nil, ""},
		{"P10/unknown-mode", []plug{{name: "a"}}, []string{"a"}, "sideways", []string{"P10()"}, ""},
	} {
		b := b
		rules := []string{strings.SplitN(b.name, "/", 2)[0]}
		if rules[0] != "P6" {
			rules = append(rules, "P6")
		}
		summary, explain := "build check "+b.name+": rejected at build time with every error reported",
			"Builds a chain with a known set of misconfigurations and compares the reported errors (rule and plugin) with the expected set: every error, not just the first, and never silently accepted."
		if b.want == nil {
			summary, explain = "build check "+b.name+": a valid chain is accepted and runs",
				"Builds a chain that the rule allows and expects no build error, then runs one exchange through it: every plugin not switched off gets OnRequest. A runtime that rejects valid chains fails here."
		}
		c := pcase("P6/build/"+strings.ReplaceAll(b.name, "/", "-"), rules, summary, explain,
			func(t *conformance.T) {
				p := pipe{plugs: b.plugs, mode: b.mode}
				var active []string
				for _, e := range b.entries {
					en := &abkitv1.PipelineEntry{Plugin: e}
					if n, cfg, ok := strings.Cut(e, ":"); ok {
						en.Plugin, en.ConfigJson = n, []byte(cfg)
					}
					if n, ok := strings.CutSuffix(e, "!off"); ok {
						en.Plugin, en.OnError = n, "off"
					}
					if n, oe, ok := strings.Cut(e, "@"); ok {
						en.Plugin, en.OnError = n, oe
					}
					if en.OnError != "off" {
						active = append(active, en.Plugin)
					}
					p.entries = append(p.entries, en)
				}
				if b.want == nil {
					p.exchanges = []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}
				}
				calls, res := p.run(t, "P6")
				if b.want == nil && len(res.GetBuildErrors()) == 0 {
					rule := strings.SplitN(b.name, "/", 2)[0]
					t.Diff(rule, "OnRequest calls of the accepted chain", each(active, "request"), seq(calls, "request"))
				}
				want := b.want
				if b.choice != "P1.names" && t.Alternative("P1.names") == "repeated" {
					want = repeatedNames(want)
				}
				got := matchBuildErrors(want, res.GetBuildErrors())
				got = slices.Compact(got) // one problem may be reported under two checks
				rule := strings.SplitN(b.name, "/", 2)[0]
				if len(got) != len(want) && len(want) > 1 {
					rule = "P6"
				}
				if !t.Diff(rule, "build errors rule(plugin)", want, got) {
					t.Logf("messages:%s", joinMsgs(res.GetBuildErrors()))
				}
				// An error must say what is wrong: a config block on a
				// plugin without a schema is about the config, not an
				// unknown plugin.
				if strings.HasPrefix(b.name, "P6/config-without-schema") {
					for _, e := range res.GetBuildErrors() {
						if e.GetPlugin() == "a" && !strings.Contains(strings.ToLower(e.GetMessage()), "config") {
							t.Errorf("P6", "the error for a's config block does not mention the config: %q", e.GetMessage())
						}
					}
				}
			})
		if b.choice != "" {
			c = choice(b.choice, c)
		}
		r.Add(c)
	}
	addBuildAlternativeCases(r)
}

// addBuildAlternativeCases check what every alternative of the build
// choices shares (rules), and each non-reference alternative as it is
// declared.
func addBuildAlternativeCases(r *conformance.Registry) {
	r.Add(pcase("P1/repeated-name/refused-or-both-run", []string{"P1", "P6"}, "a chain naming one plugin twice is refused, or runs both entries: never one silently",
		"Builds a chain with two entries of plugin a and runs one exchange. Either alternative of choice P1.names is right: the build fails with an error naming a, or it succeeds and a gets OnRequest twice (both entries). A runtime that drops an entry silently fails here whatever it declares.",
		func(t *conformance.T) {
			p := pipe{plugs: []plug{{name: "a"}}, entries: []*abkitv1.PipelineEntry{{Plugin: "a"}, {Plugin: "a"}},
				exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}
			calls, res := p.run(t, "P1")
			if errs := res.GetBuildErrors(); len(errs) > 0 {
				for _, e := range errs {
					if e.GetPlugin() == "a" || strings.Contains(e.GetMessage(), `"a"`) {
						return
					}
				}
				t.Errorf("P1", "the build failed, but no error names a: %s", joinMsgs(errs))
				return
			}
			t.Diff("P1", "OnRequest calls of a chain with a twice (built, so both entries must run)", []string{"a.request", "a.request"}, seq(calls, "request"))
		}))
	r.Add(choice("P1.names", pcase("P1/repeated-name/both-run", []string{"P1"}, "with repeated names allowed, both entries of a name run and the first counts for requires",
		"For a runtime declaring P1.names=repeated: a chain [a, b, a] where b requires a builds, and one exchange calls OnRequest on a, b, a in order.",
		func(t *conformance.T) {
			p := pipe{plugs: []plug{{name: "a"}, {name: "b", caps: &abkitv1.Capabilities{Requires: []string{"a"}}}},
				entries:   []*abkitv1.PipelineEntry{{Plugin: "a"}, {Plugin: "b"}, {Plugin: "a"}},
				exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}
			calls, res := p.run(t, "P1")
			if errs := res.GetBuildErrors(); len(errs) > 0 {
				t.Fatalf("P1", "the build failed although repeated names are declared allowed: %s", joinMsgs(errs))
			}
			t.Diff("P1", "OnRequest calls", []string{"a.request", "b.request", "a.request"}, seq(calls, "request"))
		}), "repeated"))
	r.Add(choice("P6.build-errors", pcase("P6/build/fail-fast", []string{"P6"}, "a fail-fast build reports an error it owes, and only errors it owes",
		"For a runtime declaring P6.build-errors=fail-fast: the chain [ghost, a with a config block it takes none for, b requiring the absent zz] must fail to build with at least one error, each of them one the chain has (P6 for ghost or a, P7 for b).",
		func(t *conformance.T) {
			p := pipe{plugs: []plug{{name: "a"}, {name: "b", caps: &abkitv1.Capabilities{Requires: []string{"zz"}}}},
				entries: []*abkitv1.PipelineEntry{{Plugin: "ghost"}, {Plugin: "a", ConfigJson: []byte(`{"x":1}`)}, {Plugin: "b"}}}
			_, res := p.run(t, "P6")
			owed := []string{"P6(a)", "P6(ghost)", "P7(b)"}
			got := matchBuildErrors(owed, res.GetBuildErrors())
			if len(got) == 0 {
				t.Fatalf("P6", "the chain was built; want a build error")
			}
			for _, g := range got {
				if !slices.Contains(owed, g) {
					t.Errorf("P6", "build error %s is not one the chain has (%v): %s", g, owed, joinMsgs(res.GetBuildErrors()))
				}
			}
		}), "fail-fast"))
}

// sseShapes are the event-stream shapes of recorded traffic, written anew.
var sseShapes = []struct {
	name, summary string
	ct            string // Content-Type; empty: text/event-stream
	chunks        []string
	frames        []string
	warn          bool
}{
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
