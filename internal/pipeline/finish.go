package pipeline

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// Finish ends the exchange and returns its result. It runs OnFinish once on
// every plugin whose OnRequest was dispatched, including one that denied,
// in reverse declaration order (P26, P27), after the response side. Each call
// gets a fresh context with the chain's FinishTimeout, not derived from the
// request context (P28), and sees the outcome through ex.Outcome (P29).
//
// Each OnFinish runs on its own goroutine. A finisher's error or panic is
// recovered and reported as a warning; the next one still runs. A finisher
// that overruns its deadline by more than Options.Grace is abandoned (its
// goroutine runs on) and reported; the rest still finish, on a copy of the
// exchange taken before the abandoned call started, so they do not share
// memory with it (they do not see what that call changed). Body writes
// during OnFinish are dropped with a warning (P30).
//
// Finishing a second time does nothing but add a warning to the result it
// returns (P30).
func (e *Exchange) Finish() *Result {
	if e.stage == stFinished {
		e.result.Warnings = append(e.result.Warnings, Warning{Rule: "P30", Msg: "exchange finished a second time; ignored"})
		return e.result
	}
	switch {
	case e.stage == stNew:
		e.end(gateway.OutcomeError, http.StatusInternalServerError, "", "finished before the request stage ran", errors.New("pipeline: Finish before Request"))
		e.sendError()
	case e.allowed && e.stage == stRequested:
		e.end(gateway.OutcomeError, http.StatusBadGateway, "", "finished without a response", errors.New("pipeline: Finish before Respond or Fail"))
		e.sendError()
	}
	e.stage = stFinished
	e.finishing = true
	e.outcome.Duration = time.Since(e.start)
	e.ctl.SetOutcome(e.outcome)
	left := 0
	for i := e.ran - 1; i >= 0; i-- {
		if e.c.plugins[i].fin != nil {
			left++
		}
	}
	if left > 0 && e.header != nil {
		// The sent headers are usually the plugin-facing response header
		// map; a finisher (or an abandoned one still running) must not
		// change what Result says the client got.
		e.header = e.header.Clone()
	}
	for i := e.ran - 1; i >= 0; i-- {
		if e.c.plugins[i].fin != nil {
			left--
			e.finishOne(i, left)
		}
	}
	e.res = Result{
		Outcome:  e.outcome,
		Status:   e.status,
		Header:   e.header,
		Streamed: e.streamed,
		Frames:   e.frames,
		Relayed:  e.relayed,
		Warnings: e.warnings,
		Shadows:  e.shadows,
		Err:      e.err,
		Broken:   e.broken,
	}
	if !e.streamed {
		e.res.Body = e.body
	}
	if e.allowed {
		e.res.RequestBody = e.RequestBody()
	}
	e.result = &e.res
	return e.result
}

// finishOne runs plugin i's OnFinish; left finishers follow it.
func (e *Exchange) finishOne(i, left int) {
	pl := &e.c.plugins[i]
	if left > 0 && e.spare == nil {
		// A snapshot to go on with if this call is abandoned: the abandoned
		// call may still use e.gx, so later finishers must not share it.
		e.spare, e.spareCtl = e.ctl.Clone()
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.c.opts.FinishTimeout)
	defer cancel()
	e.ctl.Enter(pl.name, gateway.PhaseFinish, pl.wReq, pl.wResp)
	var t0 time.Time
	if e.rec != nil {
		t0 = e.rec.Now()
	}
	gx := e.gx
	err := runBounded(ctx, e.c.opts.Grace, func(ctx context.Context) error { return pl.onFinish(ctx, gx) })
	if errors.Is(err, ErrAbandoned) {
		// The abandoned call may still be using e.gx: leave it (and its
		// record of writes) to it, and go on with the spare. Reset will
		// not reuse this exchange.
		e.abandoned = true
		if e.spare != nil {
			e.gx, e.ctl, e.spare, e.spareCtl = e.spare, e.spareCtl, nil, nil
		}
	} else {
		// The call completed and may have changed the exchange (state,
		// headers): a spare from before it is stale, so the next call takes
		// a fresh one, "the copy taken before the abandoned call".
		e.spare, e.spareCtl = nil, nil
		e.ctl.TakeMutated()
		if ws := e.ctl.TakeWrites(); ws != nil {
			e.noteWrites(ws)
		}
		e.noteExtensions(pl)
	}
	action, errStr := "continue", ""
	if err != nil {
		action, errStr = "error", err.Error()
		e.warn("P30", pl.name, "OnFinish: %v", err)
	}
	if e.rec != nil {
		ev := trace.Event{Family: trace.FamilyPipeline, Direction: e.c.dirName, Hook: trace.HookOnFinish,
			Plugin: pl.name, Action: action, Error: redactText(errStr), Extensions: e.takeExtTrace(), DurationNS: e.rec.Since(t0)}
		e.rec.Add(ev)
	}
}
