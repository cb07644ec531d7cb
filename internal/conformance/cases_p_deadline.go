package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/sdk/gateway"
)

// The deadline axis of the plugin suite: the finishing exchanges run with
// a finish deadline shorter than the default and with the client gone in
// the middle of the exchange (its context cancelled after OnRequest, the
// upstream's answer still coming). OnFinish must return within whatever
// deadline the host set, whatever became of the exchange (P28), once per
// exchange whose OnRequest ran (P26), without panicking (P30). The short
// deadline is short for a finisher, not for a loaded machine: 500 ms.

// deadlineAxis is the finish deadlines the axis tries.
var deadlineAxis = []time.Duration{500 * time.Millisecond, 2 * time.Second}

func addPipelineDeadlineCases(r *Registry) {
	r.Add(&Case{
		ID: "P28/finish/deadline-axis", Rules: []string{"P28", "P26", "P30"},
		Summary: "OnFinish returns within a short (500 ms) and the default (2 s) deadline, also for an exchange the client left",
		Explain: `Drives the standard JSON and streamed exchanges with a finish deadline
of 500 ms and of 2 s, and one exchange whose client goes away after
OnRequest (its context cancelled while the upstream answers). OnFinish
gets a fresh context with the deadline each time; it must return within
it, once per exchange, and must not panic.
A failure means OnFinish does slow work (a flush, a network call) without
watching ctx.Done(), or assumes a client that stayed. Fix: bound the work
by ctx, hand the rest to a background queue.`,
		Applies: all(pipelineReady, behaviour(gateway.BehaviourFinish)),
		Run: func(t *T) {
			for _, d := range deadlineAxis {
				rg := newRig(t, pipeline.Options{FinishTimeout: d})
				for _, sc := range numbered(append(jsonScenarios()[:1], streamScenarios()[:1]...)) {
					o := rg.run(sc, nil, false)
					o.at = fmt.Sprintf("%s, finish deadline %v", o.at, d)
					finishedInTime(t, rg, o, d)
				}
				finishedInTime(t, rg, clientGone(t, rg, d), d)
			}
		},
	})
}

// clientGone drives one exchange whose client context is cancelled after
// the request chain ran, before the upstream's answer.
func clientGone(t *T, rg *rig, d time.Duration) outcome {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := rg.t.rec
	n := len(rec.Events())
	ex := rg.chain.NewExchange(pipeline.Request{Request: gateway.Request{Method: "GET", URL: "/client-gone", Header: http.Header{"X-Client-Id": {"conformance"}}}}, pipeline.ExchangeOptions{Trace: rec})
	if ex.Request(ctx) {
		cancel()
		ex.Respond(ctx, pipeline.Upstream{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"ok":true}`)})
	}
	res := ex.Finish()
	return outcome{at: fmt.Sprintf("client gone after OnRequest, finish deadline %v", d), res: res, events: rec.Events()[n:]}
}

// finishedInTime checks the plugin's OnFinish calls of o: one, within the
// deadline d, without a panic.
func finishedInTime(t *T, rg *rig, o outcome, d time.Duration) {
	n := 0
	for _, e := range o.events {
		if e.Plugin != rg.name || e.Hook != "on_finish" {
			continue
		}
		n++
		switch {
		case strings.Contains(e.Error, pipeline.ErrAbandoned.Error()), strings.Contains(e.Error, "on_finish: "+pluginhost.ErrDeadline.Error()):
			t.FatalAt("P28", o.at+", on_finish", "deadline overrun: OnFinish did not return within its %v deadline (ctx.Done() was ignored); it was abandoned", d)
		case strings.Contains(e.Error, "panic"):
			t.ErrorAt("P30", o.at+", on_finish", "%s", callProblem(e.Error))
		}
	}
	if n > 1 {
		t.ErrorAt("P26", o.at, "OnFinish ran %d times for one exchange", n)
	}
}
