package runtimesuite

import (
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addPipelineResultCases reads the pipeline's answers in full where a rule
// names them: reject statuses, client responses, finish deadlines other than
// the default, warnings.
func addPipelineResultCases(r *conformance.Registry) {
	r.Add(pcase("P15/reject-status/range", []string{"P15"}, "a reject status outside 400–599 becomes 403 with a warning; 400 and 599 stand",
		"One plugin rejects six exchanges in OnRequest with statuses 0, 200, 399, 400, 599 and 600. The outcome and the client status must be the plugin's status when it lies in 400–599 and 403 otherwise, and only the replaced statuses come with a warning.",
		func(t *conformance.T) {
			statuses := []int32{0, 200, 399, 400, 599, 600}
			var exs []*abkitv1.ExchangeSpec
			for range statuses {
				exs = append(exs, exchange(jsonUpstream(`{}`)))
			}
			pl := chain(1)
			pl[0].script = func(c *Call) *abkitv1.ProbeReply {
				if c.Hook == "request" {
					return reject(statuses[c.Exchange], "no")
				}
				return nil
			}
			_, res := pipe{plugs: pl, exchanges: exs}.run(t, "P15")
			e := res.GetExchanges()
			if len(e) != len(statuses) {
				t.Fatalf("P15", "%d exchange results; want %d", len(e), len(statuses))
			}
			// 400–599 stand in every implementation (a rule); what
			// becomes of the others is a choice (P15.reject-status).
			asGiven := t.Alternative("P15.reject-status") == "as-given"
			for i, s := range statuses {
				want, warn, choice := s, false, ""
				if s < 400 || s > 599 {
					want, warn, choice = 403, true, "P15.reject-status"
					if asGiven && (s < 100 || s > 599) {
						continue // not an HTTP status: as-given says nothing of it
					}
					if asGiven {
						want, warn = s, false
					}
				}
				errorf := func(format string, args ...any) {
					if choice != "" {
						t.ChoiceErrorf(choice, "P15", format, args...)
					} else {
						t.Errorf("P15", format, args...)
					}
				}
				o := e[i].GetOutcome()
				if o.GetKind() != "deny" || o.GetStatus() != want || e[i].GetStatus() != want {
					errorf("reject with status %d: outcome %v, client status %d; want deny %d", s, o, e[i].GetStatus(), want)
				}
				if got := len(e[i].GetWarnings()) > 0; got != warn {
					errorf("reject with status %d: warning given %v; want %v (%v)", s, got, warn, e[i].GetWarnings())
				}
			}
		}))
	r.Add(pcase("P15/client/responses", []string{"P15", "P16"}, "what the client gets: a deny's reason, 502 for an upstream error, 500 for a panic, 499 for a cancelled request",
		"Four exchanges: p0 denies with 451 and a reason (the client gets 451 and the reason as text), the upstream fails (502, the status text only, the detail stays in the outcome), p0 panics in OnRequest (500), the client is gone before the chain (499, reason \"request cancelled\").",
		func(t *conformance.T) {
			pl := chain(1, "finish")
			pl[0].script = func(c *Call) *abkitv1.ProbeReply {
				switch {
				case c.Hook == "request" && c.Exchange == 0:
					return reject(451, "blocked for a reason")
				case c.Hook == "request" && c.Exchange == 2:
					return &abkitv1.ProbeReply{Panic: true}
				}
				return nil
			}
			cancelled := exchange(jsonUpstream(`{}`))
			cancelled.Cancelled = true
			_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{
				exchange(jsonUpstream(`{}`)), exchange(&abkitv1.UpstreamSpec{Error: "connection refused by 10.0.0.9"}),
				exchange(jsonUpstream(`{}`)), cancelled}}.run(t, "P15")
			e := res.GetExchanges()
			if len(e) != 4 {
				t.Fatalf("P15", "%d exchange results; want 4", len(e))
			}
			if e[0].GetStatus() != 451 {
				t.Errorf("P15", "deny: client got status %d; want 451", e[0].GetStatus())
			}
			if !denyBody(t, e[0].GetBody(), "blocked for a reason") {
				t.ChoiceErrorf("P15.deny-wire", "P15", "deny: client body %q; want the reason %q (%s)", e[0].GetBody(), "blocked for a reason", t.Alternative("P15.deny-wire"))
			}
			if o := e[0].GetOutcome(); o.GetDeniedBy() != "p0" {
				t.Errorf("P29", "deny outcome %v; want denied by p0", o)
			}
			if o := e[0].GetOutcome(); o.GetReason() != "blocked for a reason" && t.Alternative("P29.outcome") == "reason" {
				t.ChoiceErrorf("P29.outcome", "P29", "deny outcome %v; want reason %q", o, "blocked for a reason")
			}
			if e[1].GetStatus() != 502 || e[1].GetOutcome().GetKind() != "error" || e[1].GetOutcome().GetStatus() != 502 {
				t.Errorf("P16", "upstream error: client status %d, outcome %v; want 502 and an error outcome of 502", e[1].GetStatus(), e[1].GetOutcome())
			}
			if strings.Contains(string(e[1].GetBody()), "10.0.0.9") {
				t.Errorf("P16", "upstream error: the client body %q carries the internal detail; want the status text only", e[1].GetBody())
			}
			if t.Alternative("P15.deny-wire") == "text" && (e[2].GetStatus() != 500 || e[2].GetOutcome().GetKind() != "error") {
				t.ChoiceErrorf("P15.deny-wire", "P15", "panic in OnRequest: client status %d, outcome %v; want 500 and an error outcome", e[2].GetStatus(), e[2].GetOutcome())
			}
			if o := e[3].GetOutcome(); e[3].GetStatus() != 499 || o.GetStatus() != 499 || !e[3].GetCancelled() {
				t.Errorf("P15", "cancelled request: client status %d, outcome %v, cancelled %v; want 499", e[3].GetStatus(), o, e[3].GetCancelled())
			}
			if o := e[3].GetOutcome(); o.GetReason() != "request cancelled" && t.Alternative("P29.outcome") == "reason" {
				t.ChoiceErrorf("P29.outcome", "P15", "cancelled request: outcome %v; want reason %q", o, "request cancelled")
			}
		}))
	r.Add(pcase("P16/response-deny/buffered", []string{"P16", "P15"}, "a reject in OnResponse reaches the client: its status and reason, no upstream body",
		"Two plain plugins; p0 (the last to get OnResponse) rejects with 451 and a reason. The client must get 451 and the reason, not the upstream's body; the outcome is a deny by p0.",
		func(t *conformance.T) {
			pl := chain(2)
			pl[0].script = on("response", -1, reject(451, "not this answer"))
			_, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{"secret":"upstream"}`))}}.run(t, "P16")
			e := res.GetExchanges()
			if len(e) != 1 {
				t.Fatalf("P16", "%d exchange results; want 1", len(e))
			}
			if e[0].GetStatus() != 451 || strings.Contains(string(e[0].GetBody()), "upstream") {
				t.Errorf("P16", "client got %d %q; want 451 and none of the upstream's body", e[0].GetStatus(), e[0].GetBody())
			}
			if !denyBody(t, e[0].GetBody(), "not this answer") {
				t.ChoiceErrorf("P15.deny-wire", "P16", "client body %q; want the reason (%s)", e[0].GetBody(), t.Alternative("P15.deny-wire"))
			}
			if o := e[0].GetOutcome(); o.GetKind() != "deny" || o.GetDeniedBy() != "p0" || o.GetStatus() != 451 {
				t.Errorf("P16", "outcome %v; want deny 451 by p0", o)
			}
		}))
	r.Add(pcase("P25/mid-stream-reject/split-frame", []string{"P25", "P19"}, "a reject of a frame that spanned chunks: the client keeps frame 0 only, nothing of the rest",
		"The second event arrives split across two chunks, with the start of a third after it; the only streamer rejects frame 1. The client gets frame 0 and nothing else, no bytes of the unread rest are relayed, no unterminated-block warning is given, and the outcome is a deny.",
		func(t *conformance.T) {
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
		}))
	r.Add(pcase("P22/json/panic-in-the-one-frame", []string{"P22", "P21"}, "a streamer panicking in the single whole-body frame call is not called again: that call was its last",
		"A JSON response reaches a streaming plugin as one OnResponseFrame(body, last=true); the plugin panics there. That call was its closing call (P21: exactly one last=true call, also after a panic), so it gets no further frame call; the exchange ends as an error with status 500.",
		func(t *conformance.T) {
			pl := []plug{{name: "s", behaviours: []string{"stream"}, script: on("frame", -1, &abkitv1.ProbeReply{Panic: true})}}
			calls, res := pipe{plugs: pl, exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{"ok":true}`))}}.run(t, "P22")
			t.Diff("P21", "calls", []string{"s.request", "s.last"}, seq(calls))
			if e := res.GetExchanges(); len(e) != 1 || e[0].GetOutcome().GetKind() != "error" || e[0].GetStatus() != 500 {
				t.Errorf("P22", "exchange result %v; want an error outcome with status 500", e)
			}
		}))
	r.Add(pcase("P28/finish-timeout/configured", []string{"P28"}, "a finish timeout of 600 ms is the deadline each OnFinish sees",
		"The scenario sets a finish timeout of 600 ms (not the 2 s default). Each OnFinish must see a live context whose deadline is at most 600 ms away and not far below it (more than 300 ms).",
		func(t *conformance.T) {
			calls, _ := pipe{plugs: chain(2, "finish"), finishTO: int64(600 * time.Millisecond), exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P28")
			n := 0
			for _, c := range calls {
				if c.Hook != "finish" {
					continue
				}
				n++
				if c.CtxDone || c.Deadline <= 300*time.Millisecond || c.Deadline > 650*time.Millisecond {
					t.Errorf("P28", "%s: OnFinish context done=%v, deadline in %v; want a live context with the configured 600 ms deadline", c.Probe, c.CtxDone, c.Deadline)
				}
			}
			if n != 2 {
				t.Errorf("P26", "%d OnFinish calls; want 2", n)
			}
		}))
	r.Add(choice("P30.overrun", pcase("P30/abandoned/reported", []string{"P30"}, "a finisher overrunning its deadline is abandoned and reported; the next one finishes",
		"With a 100 ms finish timeout the middle of three finishers sleeps 900 ms. The runtime must abandon it (the exchange result comes back well before it wakes), report it as a warning naming it, and still finish p0.",
		func(t *conformance.T) {
			pl := chain(3, "finish")
			pl[1].script = on("finish", -1, &abkitv1.ProbeReply{SleepNs: int64(900 * time.Millisecond)})
			calls, res := pipe{plugs: pl, finishTO: int64(100 * time.Millisecond), exchanges: []*abkitv1.ExchangeSpec{exchange(jsonUpstream(`{}`))}}.run(t, "P30")
			t.Diff("P30", "finish calls", []string{"p2.finish", "p1.finish", "p0.finish"}, seq(calls, "finish"))
			e := res.GetExchanges()
			if len(e) != 1 {
				t.Fatalf("P30", "%d exchange results; want 1", len(e))
			}
			found := false
			for _, w := range e[0].GetWarnings() {
				if w.GetPlugin() == "p1" || strings.Contains(w.GetMessage(), "p1") {
					found = true
				}
			}
			if !found {
				t.Errorf("P30", "no warning names the abandoned finisher p1: %v", e[0].GetWarnings())
			}
		})))
	r.Add(pcase("P20/stream/frame-count-and-body", []string{"P19", "P20"}, "the frames counted and the bytes relayed match the stream, for 5 frames in uneven chunks",
		"Five events arrive in chunks that cut them in odd places. The runtime must count five frames, hand each streamer five frames, and relay the stream to the client byte for byte.",
		func(t *conformance.T) {
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
		}))
}
