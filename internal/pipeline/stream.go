package pipeline

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// respondStream relays a text/event-stream response block by block (P19):
// headers first, then each complete SSE block. A block with a data line is a
// frame and goes to every streaming plugin, in reverse declaration order,
// before it is relayed and before the next frame is dispatched (P20).
// Comment-only and field-only blocks are relayed without dispatch. The
// blocks one upstream chunk completes are flushed together, after the last
// of them and before the next read of the upstream, so the client never
// waits on bytes the gateway holds. After the
// stream every streaming plugin gets one last=true call with an empty frame
// (P21).
func (e *Exchange) respondStream(ctx context.Context, up Upstream) {
	e.streamed = true
	e.ctx = ctx
	// The head goes out before the first byte of the body: the first
	// frame's calls may still change the response headers (P33).
	if e.emitFn == nil {
		e.emitFn = e.emit // one method value per exchange, not per chunk
	}
	var early error
	if up.Stream == nil {
		_ = e.framer.Feed(up.Body, e.emitFn)
	} else {
		for !e.stopped {
			chunk, err := up.Stream.Next(ctx)
			if len(chunk) > 0 && e.framer.Feed(chunk, e.emitFn) != nil {
				break
			}
			// The chunk's blocks are written: one flush sends them all
			// before the next read, which may wait on the upstream. A
			// flush per block cost one write(2) per event.
			e.flushPending()
			if e.maxBody > 0 && e.framer.Pending() > e.maxBody {
				// An SSE block that never ends (an endless data line):
				// the framer would hold it whole.
				tl := e.tooLarge("an SSE event")
				e.warn("P19", "", "%v; the stream was cut after %d frame(s)", tl, e.frames)
				e.end(gateway.OutcomeError, 0, "", tl.Error(), fmt.Errorf("%w: %w", ErrTooLarge, tl))
				e.broken, e.stopped = true, true
				e.framer.Reset()
				break
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				early = err
				break
			}
		}
	}
	if !e.stopped {
		if n, _ := e.framer.End(e.emitFn); n > 0 {
			e.warn("P19", "", "unterminated final SSE block (%d bytes) relayed but not dispatched as a frame", n)
		}
	}
	if early != nil {
		e.broken = true
		e.warn("P21", "", "upstream stream ended early after %d frame(s): %v", e.frames, early)
		e.end(gateway.OutcomeError, 0, "", "upstream stream ended early: "+early.Error(), fmt.Errorf("%w: stream ended early: %w", ErrUpstream, early))
	}
	if !e.headerSent {
		e.sendStreamHead()
	}
	e.flush()
	// P21: exactly one closing call per streaming plugin, whatever happened.
	for k := 0; k < len(e.c.streamRev); {
		k, _ = e.frameFrom(nil, e.frames, true, k)
	}
	if !sameHeader(e.gx.Response.Header, e.header) {
		// P33: the head is gone; what the plugins changed since is undone,
		// so OnFinish sees what the client got.
		e.warn("P33", "", "response header change(s) to %s refused: made after the response head was sent", strings.Join(ChangedHeaderNames(e.gx.Response.Header, e.header), ", "))
		e.gx.Response.Header = e.header.Clone()
	}
	e.end(gateway.OutcomeAllow, e.status, "", "", nil)
}

// sendStreamHead sends a streamed response's head as the plugins left it,
// framing headers restored, and gives the plugins a copy from then on, so
// that a later change cannot touch what was sent.
func (e *Exchange) sendStreamHead() {
	h := e.gx.Response.Header
	if names := e.respFraming.restore(h); names != nil {
		e.warn("P33", "", "response header change(s) to %s ignored: framing headers are the host's", strings.Join(names, ", "))
	}
	e.sendHeader(e.gx.Response.Status, h)
	e.gx.Response.Header = h.Clone()
}

// emit handles one block from the framer.
func (e *Exchange) emit(raw []byte, isFrame bool) error {
	if isFrame {
		idx := e.frames
		e.frames++
		frame := e.borrow(raw)
		for k := 0; k < len(e.c.streamRev); {
			next, stop := e.frameFrom(frame, idx, false, k)
			if stop {
				// P25: the frame goes no further and is not relayed.
				e.poison()
				e.stopped = true
				return errStop
			}
			k = next
		}
		e.poison()
	}
	if !e.headerSent {
		e.sendStreamHead()
	}
	if !e.write(raw) {
		e.stopped = true
		return errStop
	}
	return nil
}

// frameFrom dispatches one frame to the streaming plugins from position from
// of streamRev on. It returns the next position and whether the frame's
// dispatch stopped (a rejection or panic under enforce).
func (e *Exchange) frameFrom(frame []byte, idx int, last bool, from int) (next int, stop bool) {
	rev := e.c.streamRev
	k := from
	defer func() {
		if r := recover(); r != nil {
			next, stop = k+1, e.panicked(rev[k], trace.HookOnResponseFrame, idx, last, r)
		}
	}()
	ps := e.c.plugins
	for ; k < len(rev); k++ {
		i := rev[k]
		pl := &ps[i]
		e.ctl.Enter(pl.name, gateway.PhaseFrame, pl.wReq, pl.wResp)
		var t0 time.Time
		if e.rec != nil {
			t0 = e.rec.Now()
			if !e.headerSent && !last {
				e.snap, e.snapResp = e.gx.Response.Header.Clone(), true
			}
		}
		act, err := pl.onResponseFrame(e.ctx, e.gx, frame, last)
		if err != nil {
			return k + 1, e.panicked(i, trace.HookOnResponseFrame, idx, last, err)
		}
		if e.after(i, trace.HookOnResponseFrame, act, t0, idx, last) {
			return k + 1, true
		}
	}
	return k, false
}
