package pluginhost

import (
	"context"

	"github.com/abkit/abkit/sdk/gateway"
)

//go:generate go run gen_behaviours.go

// The mixins below each add one optional behaviour; behaviours_gen.go
// composes them into one type per combination.

type initM struct{ r *remote }

func (m initM) Init(ctx context.Context) error { return m.r.init(ctx) }

type shutdownM struct{ r *remote }

func (m shutdownM) Shutdown(ctx context.Context) error { return m.r.shutdown(ctx) }

type finishM struct{ r *remote }

func (m finishM) OnFinish(ctx context.Context, ex *gateway.Exchange) error {
	return m.r.onFinish(ctx, ex)
}

type streamM struct{ r *remote }

func (m streamM) OnResponseFrame(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	return m.r.frame(ctx, ex, frame, last)
}

type readyM struct{ r *remote }

func (m readyM) Ready(ctx context.Context) error { return m.r.ready(ctx) }
