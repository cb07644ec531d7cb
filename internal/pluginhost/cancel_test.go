package pluginhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// ctxObserver records, in extensions, what its hooks see of their context:
// ctx.Err() and whether it has a deadline. The same code runs in-process and
// as the re-executed test binary.
type ctxObserver struct{}

func (ctxObserver) Name() string { return "ctx-observer" }
func (ctxObserver) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Records what its hooks see of their context"}
}

func seen(ctx context.Context) string {
	_, dl := ctx.Deadline()
	return fmt.Sprintf("err=%v deadline=%v", ctx.Err(), dl)
}

func (ctxObserver) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// OnResponse and the last frame reject with what the context looked like,
// so that it shows in the trace and the outcome on both sides.
func (ctxObserver) OnResponse(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	if ex.Response.Header.Get("Content-Type") == "text/event-stream" {
		return gateway.Continue()
	}
	return gateway.Reject(499, "on_response saw "+seen(ctx))
}

func (ctxObserver) OnResponseFrame(ctx context.Context, _ *gateway.Exchange, _ []byte, last bool) gateway.Action {
	if last {
		return gateway.Reject(499, "last frame saw "+seen(ctx))
	}
	return gateway.Continue()
}

func observerFactory() gateway.Factory {
	return gateway.Factory{Name: "ctx-observer", New: func(json.RawMessage) (gateway.Plugin, error) { return ctxObserver{}, nil }}
}

// serveCancelHelper serves the observer when the test binary is re-executed
// as a plugin in mode "ctx-observer".
func serveCancelHelper(mode string) bool {
	if mode != "ctx-observer" {
		return false
	}
	f := observerFactory()
	sdk.Serve(sdk.Plugin{Name: "ctx-observer", Description: "Records what its hooks see of their context", Pipeline: &f})
	return true
}

// clientGone is an in-process plugin that cancels the request's context in
// its OnRequest: placed last, it is a client that goes away after the
// request phase and before the response.
type clientGone struct{ cancel func() }

func (clientGone) Name() string { return "client-gone" }
func (clientGone) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Cancels the request context after the request phase"}
}
func (c clientGone) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	c.cancel()
	return gateway.Continue()
}
func (clientGone) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

type cancelRun struct {
	Events  []trace.Event
	Outcome gateway.Outcome
	Status  int
	Body    string
}

// runCancelled runs one exchange through [observer, clientGone] with ctx
// cancelled between request and response, with or without a deadline.
func runCancelled(t *testing.T, observer gateway.Factory, up pipeline.Upstream, deadline bool) cancelRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if deadline {
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	}
	defer cancel()
	cf := gateway.Factory{Name: "client-gone", New: func(json.RawMessage) (gateway.Plugin, error) { return clientGone{cancel: cancel}, nil }}
	c, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{{Plugin: "ctx-observer"}, {Plugin: "client-gone"}}},
		[]gateway.Factory{observer, cf}, pipeline.Options{})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start: %v", err)
	}
	defer c.Stop(context.Background())
	rec := trace.NewRecorder()
	var client pipeline.BufferClient
	r := c.Run(ctx, pipeline.Request{Request: gateway.Request{Method: "POST", URL: "http://upstream/v1/chat/completions"}, Body: []byte(`{}`)}, up,
		pipeline.ExchangeOptions{Trace: rec, Client: &client})
	o := r.Outcome
	o.Duration = 0
	return cancelRun{Events: trace.WithoutDurations(rec.Events()), Outcome: o, Status: r.Status, Body: client.Body.String()}
}

// TestCancelParity_P15_P16_P19: a client that goes away between the request
// and the response does not change what an out-of-process plugin sees or
// what the exchange gives: the plugin is still called for OnResponse and
// the frames, with a context already cancelled (and the request's deadline,
// if any), exactly as in-process — not an error outcome from a gRPC call
// the cancellation aborted.
func TestCancelParity_P15_P16_P19(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := pluginhost.Load(context.Background(), self, pluginhost.Options{Env: []string{helperEnv + "=ctx-observer"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	remote, ok := p.Factory()
	if !ok {
		t.Fatal("the observer serves no pipeline")
	}
	ups := map[string]pipeline.Upstream{"buffered": {Status: 200, Body: []byte(`{"ok":true}`)}, "streamed": sse(chatStream)}
	for name, up := range ups {
		for _, deadline := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/deadline=%v", name, deadline), func(t *testing.T) {
				in := runCancelled(t, observerFactory(), up, deadline)
				out := runCancelled(t, remote, up, deadline)
				if !reflect.DeepEqual(in, out) {
					t.Errorf("in-process and out-of-process differ:\nin:  %+v\nout: %+v", in, out)
				}
				// The comparison means something only if the plugin ran
				// after the cancel and saw it.
				// (A buffered body reaches a streaming plugin as one last
				// frame, P22, so both shapes end at the last frame.)
				want := fmt.Sprintf("last frame saw err=context canceled deadline=%v", deadline)
				if out.Outcome.Reason != want {
					t.Errorf("outcome %+v, want the observer's rejection %q", out.Outcome, want)
				}
			})
		}
	}
}
