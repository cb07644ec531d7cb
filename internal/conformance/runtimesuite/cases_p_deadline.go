package runtimesuite

import (
	"fmt"
	"slices"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// The deadline axis: exchange shapes (a JSON answer, a stream, a denial)
// run with the middle plugin slower than its hook's deadline, well within
// it, and with the client gone in the middle of a hook. Whatever the
// timing, the finishing rules hold: every plugin whose OnRequest ran
// finishes once (P26), LIFO (P27), with a fresh live context whose
// deadline the host set (P28), and the exchange result comes back (P30).
// How an overrun is reported is a choice (P30.overrun) and is checked by
// its own case. "Within" is a tenth of the deadline, so a loaded machine
// does not turn it into an overrun: real deadlines only as hang guards.

// deadlineShape is an exchange shape of the deadline axis.
type deadlineShape struct {
	name       string
	behaviours []string
	exchange   func() *abkitv1.ExchangeSpec
	denier     int // -1: nobody denies
	// cancelAt is the hook in which the client goes away (a plugin
	// replying CancelClient), its plugin, and the plugins whose OnRequest
	// then runs.
	cancelHook  string
	cancelProbe int
	cancelRan   int
}

func deadlineShapes() []deadlineShape {
	return []deadlineShape{
		{name: "json", behaviours: []string{"finish"}, exchange: func() *abkitv1.ExchangeSpec { return exchange(jsonUpstream(`{"a":1}`)) },
			denier: -1, cancelHook: "request", cancelProbe: 1, cancelRan: 2},
		{name: "stream", behaviours: []string{"finish", "stream"}, exchange: func() *abkitv1.ExchangeSpec { return exchange(sseUpstream(sseFrames(3), false)) },
			denier: -1, cancelHook: "frame", cancelProbe: 1, cancelRan: 3},
		{name: "deny", behaviours: []string{"finish"}, exchange: func() *abkitv1.ExchangeSpec { return exchange(jsonUpstream(`{}`)) },
			denier: 1, cancelHook: "request", cancelProbe: 0, cancelRan: 1},
	}
}

// deadlinePoint is where on the deadline axis the middle plugin's OnFinish
// (or the client) stands.
type deadlinePoint struct {
	name     string
	finishTO time.Duration // 0: the default (2 s)
	sleep    time.Duration
	cancel   bool
}

var deadlinePoints = []deadlinePoint{
	{name: "finish-over-deadline", finishTO: 100 * time.Millisecond, sleep: 900 * time.Millisecond},
	{name: "finish-within-deadline", sleep: 200 * time.Millisecond},
	{name: "client-gone-mid-hook", cancel: true},
}

// addDeadlineAxisCases registers the exchange cases of the deadline axis
// (P26, P27, P28, P30).
func addDeadlineAxisCases(r *conformance.Registry) {
	for _, sh := range deadlineShapes() {
		for _, pt := range deadlinePoints {
			r.Add(pcase(fmt.Sprintf("P28/deadline-axis/%s/%s", sh.name, pt.name), []string{"P28", "P26", "P27", "P30"},
				fmt.Sprintf("%s exchange, %s: every plugin that ran finishes once, LIFO, with a live context", sh.name, pt.name),
				"Three finishing probes run one "+sh.name+" exchange while the middle one's OnFinish overruns a 100 ms finish deadline, stays well within the default one, or the client goes away inside a hook. "+
					"Whatever the timing, every plugin whose OnRequest ran must finish exactly once in reverse declaration order, each with a context the client's cancellation does not reach and whose deadline the host set, and the exchange result must come back. "+
					"A runtime that derives the finish context from the request, stops finishing at a slow plugin or skips finishers of a cancelled exchange fails here.",
				deadlineCase(sh, pt)))
		}
	}
}

func deadlineCase(sh deadlineShape, pt deadlinePoint) func(t *conformance.T) {
	return func(t *conformance.T) {
		pl := chain(3, sh.behaviours...)
		ran := 3
		if sh.denier >= 0 {
			pl[sh.denier].script = on("request", -1, reject(403, "denied by probe"))
			ran = sh.denier + 1
		}
		switch {
		case pt.cancel:
			frame := -1
			if sh.cancelHook == "frame" {
				frame = 0
			}
			prev := pl[sh.cancelProbe].script
			pl[sh.cancelProbe].script = func(c *Call) *abkitv1.ProbeReply {
				if r := on(sh.cancelHook, frame, &abkitv1.ProbeReply{CancelClient: true})(c); r != nil {
					return r
				}
				if prev != nil {
					return prev(c)
				}
				return nil
			}
			ran = sh.cancelRan
		default:
			prev := pl[1].script
			pl[1].script = func(c *Call) *abkitv1.ProbeReply {
				if c.Hook == "finish" {
					return &abkitv1.ProbeReply{SleepNs: int64(pt.sleep)}
				}
				if prev != nil {
					return prev(c)
				}
				return nil
			}
		}
		calls, res := pipe{plugs: pl, finishTO: int64(pt.finishTO), exchanges: []*abkitv1.ExchangeSpec{sh.exchange()}}.run(t, "P28")
		want := each(rev(names(3)[:ran]), "finish")
		got := seq(calls, "finish")
		rule := "P27"
		if len(got) != len(want) || !slices.Equal(sortedCopy(got), sortedCopy(want)) {
			rule = "P26"
		}
		t.Diff(rule, "finish calls", want, got)
		limit := pt.finishTO
		if limit == 0 {
			limit = 2 * time.Second
		}
		for _, c := range calls {
			if c.Hook != "finish" {
				continue
			}
			if c.CtxDone {
				t.Errorf("P28", "%s: OnFinish context is cancelled: the finish context must not derive from the request's", c.Probe)
			}
			if c.Deadline <= 0 || c.Deadline > limit+50*time.Millisecond {
				t.Errorf("P28", "%s: OnFinish deadline in %v; want a host-set deadline of at most %v", c.Probe, c.Deadline, limit)
			}
		}
		if len(res.GetExchanges()) != 1 {
			t.Errorf("P30", "%d exchange results; want 1: a finisher's timing must not keep the exchange from ending", len(res.GetExchanges()))
		}
	}
}

func sortedCopy(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}
