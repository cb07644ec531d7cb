package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// callFailure is a failure that is not a panic (Panicked false), as a
// plugin host reports a call to a process that died or did not answer.
type callFailure struct{ msg string }

func (e *callFailure) Error() string  { return e.msg }
func (e *callFailure) Panicked() bool { return false }

// failer fails one hook point with its failure after changing a header, as
// a plugin may change the exchange before it fails. A frame fails when it
// holds "fail".
type failer struct {
	name    string
	hook    string // trace.Hook* of the failing hook; "" never fails
	failure error
}

func (f *failer) Name() string { return f.name }
func (f *failer) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "fails " + f.hook}
}

func (f *failer) fails(hook string, h http.Header) error {
	if hook != f.hook {
		return nil
	}
	if h != nil {
		h.Set("X-Failer", f.name)
	}
	return f.failure
}

func (f *failer) OnRequestErr(ctx context.Context, ex *gateway.Exchange) (gateway.Action, error) {
	return gateway.Continue(), f.fails(trace.HookOnRequest, ex.Request.Header)
}

func (f *failer) OnResponseErr(ctx context.Context, ex *gateway.Exchange) (gateway.Action, error) {
	return gateway.Continue(), f.fails(trace.HookOnResponse, ex.Response.Header)
}

func (f *failer) OnResponseFrameErr(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) (gateway.Action, error) {
	if !bytes.Contains(frame, []byte("fail")) {
		return gateway.Continue(), nil
	}
	return gateway.Continue(), f.fails(trace.HookOnResponseFrame, ex.Response.Header)
}

func (f *failer) OnFinishErr(ctx context.Context, ex *gateway.Exchange) (err, failure error) {
	return nil, f.fails(trace.HookOnFinish, nil)
}

// raise is a public hook's answer: its failure raised as a panic.
func raise(a gateway.Action, failure error) gateway.Action {
	if failure != nil {
		panic(failure)
	}
	return a
}

// failPanics is failer as an in-process plugin: its public hooks panic
// with the failure, and it has no FailingHooks.
type failPanics struct{ f *failer }

func (p failPanics) Name() string                       { return p.f.Name() }
func (p failPanics) Capabilities() gateway.Capabilities { return p.f.Capabilities() }
func (p failPanics) OnRequest(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	return raise(p.f.OnRequestErr(ctx, ex))
}
func (p failPanics) OnResponse(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	return raise(p.f.OnResponseErr(ctx, ex))
}
func (p failPanics) frame(ctx context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	return raise(p.f.OnResponseFrameErr(ctx, ex, frame, last))
}
func (p failPanics) finish(ctx context.Context, ex *gateway.Exchange) error {
	err, failure := p.f.OnFinishErr(ctx, ex)
	raise(gateway.Continue(), failure)
	return err
}

// failErrs is failer with FailingHooks; its public hooks must not be
// called by the runtime, so they panic with a value no case expects.
type failErrs struct{ *failer }

func (p failErrs) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	panic("public OnRequest called")
}
func (p failErrs) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	panic("public OnResponse called")
}
func (p failErrs) OnResponseFrame(context.Context, *gateway.Exchange, []byte, bool) gateway.Action {
	panic("public OnResponseFrame called")
}
func (p failErrs) OnFinish(context.Context, *gateway.Exchange) error {
	panic("public OnFinish called")
}

// How the subject plugin reports its failure.
const (
	viaPanic   = "panic"          // in process, panicking
	viaCompose = "errors/compose" // FailingHooks on the Base of gateway.Compose, as pluginhost's
	viaDirect  = "errors/direct"  // FailingHooks on the instance itself
)

// instance is f as a plugin reporting failures via how, streaming when
// stream is set; every variant finishes.
func (f *failer) instance(how string, stream bool) gateway.Plugin {
	switch how {
	case viaPanic:
		p := failPanics{f}
		o := gateway.Optional{Finish: p.finish}
		if stream {
			o.Frame = p.frame
		}
		return gateway.Compose(p, o)
	case viaCompose:
		p := failErrs{f}
		o := gateway.Optional{Finish: p.OnFinish}
		if stream {
			o.Frame = p.OnResponseFrame
		}
		return gateway.Compose(p, o)
	}
	if stream {
		return failErrs{f}
	}
	return struct {
		plainPlugin
		FailingHooks
		gateway.Finisher
	}{failErrs{f}, failErrs{f}, failErrs{f}}
}

// failRun is what an exchange gave, without durations.
type failRun struct {
	Outcome  gateway.Outcome
	Status   int
	Header   http.Header
	Body     string
	Streamed bool
	Frames   int
	Relayed  int64
	ReqBody  string
	Warnings []Warning
	Shadows  []Shadow
	Err      string
	Value    any // the *PanicError's value
	Broken   bool
	Trace    []trace.Event
}

// runFailing runs one exchange through before, the subject and after, the
// subject failing hook via how under policy.
func runFailing(t *testing.T, hook string, streamed bool, policy OnError, failure error, how string) failRun {
	t.Helper()
	stream := hook == trace.HookOnResponseFrame
	subject := &failer{name: "subject", hook: hook, failure: failure}
	facs := []gateway.Factory{
		{Name: "before", New: func(json.RawMessage) (gateway.Plugin, error) {
			return (&failer{name: "before"}).instance(viaPanic, false), nil
		}},
		{Name: "subject", New: func(json.RawMessage) (gateway.Plugin, error) { return subject.instance(how, stream), nil }},
		{Name: "after", New: func(json.RawMessage) (gateway.Plugin, error) {
			return (&failer{name: "after"}).instance(viaPanic, false), nil
		}},
	}
	spec := Spec{Entries: []Entry{{Plugin: "before"}, {Plugin: "subject", OnError: policy}, {Plugin: "after"}}}
	c, err := Build(spec, facs, Options{})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if got := c.plugins[1].fail != nil; got != (how != viaPanic) {
		t.Fatalf("%s: Build found FailingHooks %v", how, got)
	}
	up := Upstream{Status: 200, Header: jsonHeader(), Body: []byte(`{"fail":true}`)}
	if streamed {
		up = Upstream{Status: 200, Header: sseHeader(), Body: []byte("data: one\n\ndata: fail\n\ndata: three\n\n")}
	}
	rec := trace.NewRecorder().WithoutDurations()
	res := c.Run(context.Background(), Request{Request: gateway.Request{Method: "POST", URL: "/v1", Header: http.Header{"X-In": {"1"}}}},
		up, ExchangeOptions{Trace: rec})
	run := failRun{Outcome: res.Outcome, Status: res.Status, Header: res.Header, Body: string(res.Body),
		Streamed: res.Streamed, Frames: res.Frames, Relayed: res.Relayed, ReqBody: string(res.RequestBody),
		Warnings: res.Warnings, Shadows: res.Shadows, Broken: res.Broken, Trace: rec.Events()}
	run.Outcome.Duration = 0
	if res.Err != nil {
		run.Err = res.Err.Error()
		var pe *PanicError
		if errors.As(res.Err, &pe) {
			run.Value = pe.Value
		}
	}
	return run
}

// An error returned through FailingHooks gives, at every hook point and
// under both policies, exactly the exchange and trace that the same failure
// raised as a panic by an in-process plugin gives.
func TestFailingHooksAsPanics(t *testing.T) {
	points := []struct {
		name     string
		hook     string
		streamed bool
	}{
		{"on_request", trace.HookOnRequest, false},
		{"on_response", trace.HookOnResponse, false},
		{"on_response_frame/buffered", trace.HookOnResponseFrame, false},
		{"on_response_frame/streamed", trace.HookOnResponseFrame, true},
		{"on_finish", trace.HookOnFinish, false},
	}
	failures := []struct {
		name string
		err  error
	}{
		{"failed call", &callFailure{msg: "process exited"}},
		{"remote panic", errors.New("boom")},
	}
	for _, pt := range points {
		for _, policy := range []OnError{Enforce, Observe} {
			for _, fl := range failures {
				t.Run(fmt.Sprintf("%s/%s/%s", pt.name, policy, fl.name), func(t *testing.T) {
					want := runFailing(t, pt.hook, pt.streamed, policy, fl.err, viaPanic)
					checkFailed(t, pt.hook, policy, fl.err, want)
					for _, how := range []string{viaCompose, viaDirect} {
						got := runFailing(t, pt.hook, pt.streamed, policy, fl.err, how)
						if !reflect.DeepEqual(got, want) {
							t.Errorf("%s:\n got %+v\nwant %+v", how, got, want)
						}
					}
				})
			}
		}
	}
}

// checkFailed makes sure the panic baseline did fail where asked, so that
// the comparison is not of two exchanges where nothing happened.
func checkFailed(t *testing.T, hook string, policy OnError, failure error, r failRun) {
	t.Helper()
	switch {
	case hook == trace.HookOnFinish:
		if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].String(), "OnFinish: panic: "+failure.Error()) {
			t.Fatalf("warnings %v: want the finish failure", r.Warnings)
		}
	case policy == Observe:
		if len(r.Shadows) != 1 || r.Shadows[0].Error == "" || r.Outcome.Kind != gateway.OutcomeAllow {
			t.Fatalf("shadows %+v outcome %+v: want one shadow error and an allowed exchange", r.Shadows, r.Outcome)
		}
	default:
		if r.Outcome.Kind != gateway.OutcomeError || r.Value != failure {
			t.Fatalf("outcome %+v value %v: want an error outcome from the failure", r.Outcome, r.Value)
		}
	}
}
