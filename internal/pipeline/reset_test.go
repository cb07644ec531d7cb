package pipeline

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/abkit/abkit/sdk/gateway"
)

// TestResetReusesExchange: a reset exchange behaves as a new one: it
// starts from the new request, with no state, extension or outcome left
// from the last, and its result is the new exchange's.
func TestResetReusesExchange(t *testing.T) {
	log := &recLog{}
	var seen []string
	p := &fake{name: "p", log: log, finish: true,
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			if v, ok := gateway.GetState(ex, stateKey); ok {
				seen = append(seen, "state left over: "+v)
			}
			if _, ok := ex.Extension("k"); ok {
				seen = append(seen, "extension left over")
			}
			seen = append(seen, ex.Request.URL)
			gateway.SetState(ex, stateKey, ex.Request.URL)
			ex.SetExtension("k", 1)
			if ex.Request.URL == "http://svc/deny" {
				return gateway.Reject(403, "no")
			}
			return gateway.Continue()
		}}
	c := buildFakes(t, Options{}, p)
	ctx := context.Background()
	x := c.NewExchange(Request{Request: gateway.Request{Method: "GET", URL: "http://svc/deny", Header: http.Header{}}}, ExchangeOptions{})
	if x.Reset(req(), ExchangeOptions{}) {
		t.Fatal("Reset of an exchange that has not finished: want refused")
	}
	x.Request(ctx)
	if res := x.Finish(); res.Outcome.Kind != gateway.OutcomeDeny {
		t.Fatalf("first exchange: %v, want deny", res.Outcome.Kind)
	}
	if !x.Reset(Request{Request: gateway.Request{Method: "GET", URL: "http://svc/ok", Header: http.Header{}}}, ExchangeOptions{}) {
		t.Fatal("Reset of a finished exchange refused")
	}
	if !x.Request(ctx) {
		t.Fatal("second exchange denied")
	}
	x.Respond(ctx, jsonUp(`{"a":1}`))
	res := x.Finish()
	if res.Outcome.Kind != gateway.OutcomeAllow || string(res.Body) != `{"a":1}` || len(res.Warnings) != 0 {
		t.Errorf("second exchange: %v %q %v, want allow with the new body and no warnings", res.Outcome.Kind, res.Body, res.Warnings)
	}
	if want := []string{"http://svc/deny", "http://svc/ok"}; len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("OnRequest saw %q, want %q", seen, want)
	}
}

// TestResetRefusedAfterAbandonedFinisherP28: an exchange whose finisher
// was abandoned past its deadline is never reused: the finisher still
// runs on the plugin-facing exchange, and must go on seeing its own
// exchange, not the next one the host drives.
func TestResetRefusedAfterAbandonedFinisherP28(t *testing.T) {
	release := make(chan struct{})
	saw := make(chan string, 1)
	entered := make(chan *gateway.Exchange, 1)
	p := &fake{name: "slow", log: &recLog{}, finish: true, fin: func(_ context.Context, ex *gateway.Exchange) error {
		if ex.Request.URL != "http://svc/first" {
			return nil // later exchanges finish at once
		}
		entered <- ex
		<-release // overruns its deadline: abandoned
		saw <- ex.Request.URL
		return nil
	}}
	c := buildFakes(t, Options{FinishTimeout: time.Millisecond, Grace: time.Millisecond}, p)
	ctx := context.Background()
	x := c.NewExchange(Request{Request: gateway.Request{Method: "GET", URL: "http://svc/first", Header: http.Header{}}}, ExchangeOptions{})
	x.Request(ctx)
	x.Respond(ctx, jsonUp("{}"))
	res := x.Finish()
	if len(res.Warnings) == 0 {
		t.Fatalf("the finisher was not abandoned (no warning): %v", res.Warnings)
	}
	first := <-entered
	// The host drives its next exchange, reusing x only if Reset allows.
	next := x
	if !x.Reset(Request{Request: gateway.Request{Method: "GET", URL: "http://svc/second", Header: http.Header{}}}, ExchangeOptions{}) {
		next = c.NewExchange(Request{Request: gateway.Request{Method: "GET", URL: "http://svc/second", Header: http.Header{}}}, ExchangeOptions{})
	} else {
		t.Error("Reset reused an exchange whose finisher was abandoned (P28)")
	}
	next.Request(ctx)
	next.Respond(ctx, jsonUp("{}"))
	next.Finish()
	if next.Gateway() == first {
		t.Error("the next exchange runs on the abandoned finisher's plugin-facing exchange")
	}
	close(release)
	if got := <-saw; got != "http://svc/first" {
		t.Errorf("the abandoned finisher saw request %q after the host moved on, want its own http://svc/first", got)
	}
}
