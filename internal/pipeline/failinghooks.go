package pipeline

import (
	"context"
	"fmt"

	"github.com/abkit/abkit/sdk/gateway"
)

// FailingHooks is implemented by a plugin whose hook calls can fail other
// than by a panic of its code: a plugin host's stand-in for a plugin in
// another process, whose call fails when the process dies, the call times
// out or the plugin panics there. The public hooks have no error result,
// so the runtime calls these methods instead when the plugin has them and
// handles a non-nil error exactly as it handles a recovered panic of that
// hook (the same outcome, status, shadow, warning and trace event, under
// either on_error policy). Recovery then stays for genuine panics of
// in-process plugin code.
//
// Build looks for it once per plugin, on the instance or, for an instance
// made with gateway.Compose, on its Base; an implementation found on Base
// must make the same calls as the behaviours composed around it.
type FailingHooks interface {
	// OnRequestErr is OnRequest (P15) with the call's failure.
	OnRequestErr(ctx context.Context, ex *gateway.Exchange) (gateway.Action, error)
	// OnResponseErr is OnResponse (P16) with the call's failure.
	OnResponseErr(ctx context.Context, ex *gateway.Exchange) (gateway.Action, error)
	// OnResponseFrameErr is OnResponseFrame (P19–P25) with the call's
	// failure; it is called only on a gateway.StreamingResponder.
	OnResponseFrameErr(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) (gateway.Action, error)
	// OnFinishErr is OnFinish (P26–P30): err is what the plugin's OnFinish
	// returned, failure the call's failure. It is called only on a
	// gateway.Finisher.
	OnFinishErr(ctx context.Context, ex *gateway.Exchange) (err, failure error)
}

// failingHooksOf returns p's FailingHooks, looking through one
// gateway.Compose, or nil.
func failingHooksOf(p gateway.Plugin) FailingHooks {
	if f, ok := p.(FailingHooks); ok {
		return f
	}
	if b, ok := p.(interface{ Base() gateway.Plugin }); ok {
		if f, ok := b.Base().(FailingHooks); ok {
			return f
		}
	}
	return nil
}

// The hook calls of one plugin: through FailingHooks when it has them,
// otherwise the public hooks with a nil error (their panics are recovered
// by the caller's deferred handler).

func (pl *plug) onRequest(ctx context.Context, ex *gateway.Exchange) (gateway.Action, error) {
	if pl.fail != nil {
		return pl.fail.OnRequestErr(ctx, ex)
	}
	return pl.p.OnRequest(ctx, ex), nil
}

func (pl *plug) onResponse(ctx context.Context, ex *gateway.Exchange) (gateway.Action, error) {
	if pl.fail != nil {
		return pl.fail.OnResponseErr(ctx, ex)
	}
	return pl.p.OnResponse(ctx, ex), nil
}

func (pl *plug) onResponseFrame(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) (gateway.Action, error) {
	if pl.fail != nil {
		return pl.fail.OnResponseFrameErr(ctx, ex, frame, last)
	}
	return pl.stream.OnResponseFrame(ctx, ex, frame, last), nil
}

// onFinish calls OnFinish; a failure is reported as runBounded reports a
// recovered panic of it.
func (pl *plug) onFinish(ctx context.Context, ex *gateway.Exchange) error {
	if pl.fail == nil {
		return pl.fin.OnFinish(ctx, ex)
	}
	err, failure := pl.fail.OnFinishErr(ctx, ex)
	if failure != nil {
		return fmt.Errorf("panic: %v", failure)
	}
	return err
}
