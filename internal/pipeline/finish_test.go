package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/abkit/abkit/sdk/gateway"
)

// P30: Result.Header is what the client got. A finisher that changes the
// response headers after they went out, or one that is abandoned and goes
// on changing them while the host reads the result, must not change it
// (the abandoned case was a data race under -race).
func TestFinishCannotChangeSentHeaderP30(t *testing.T) {
	done := make(chan struct{})
	log := &recLog{}
	last := &fake{name: "last", log: log, finish: true, fin: func(ctx context.Context, ex *gateway.Exchange) error {
		defer close(done)
		<-ctx.Done()
		// Overrun the deadline by more than Grace: abandoned, then keep
		// using the exchange as a misbehaving plugin would.
		for i := range 20 {
			ex.Response.Header.Set("X-Late", string(rune('a'+i)))
			time.Sleep(2 * time.Millisecond)
		}
		return nil
	}}
	early := &fake{name: "early", log: log, finish: true, fin: func(_ context.Context, ex *gateway.Exchange) error {
		ex.Response.Header.Set("X-Finish", "1")
		return nil
	}}
	c := buildFakes(t, Options{FinishTimeout: 10 * time.Millisecond, Grace: 5 * time.Millisecond}, last, early)
	res := c.Run(context.Background(), req(), jsonUp("x"), ExchangeOptions{})
	if v := res.Header.Get("X-Finish"); v != "" {
		t.Errorf("Result.Header shows a header set during OnFinish (X-Finish=%q); the client never got it", v)
	}
	for range 10 { // read while the abandoned finisher writes
		_ = res.Header.Get("X-Late")
		time.Sleep(time.Millisecond)
	}
	<-done
	if v := res.Header.Get("X-Late"); v != "" {
		t.Errorf("Result.Header changed by an abandoned finisher (X-Late=%q)", v)
	}
	if res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("Result.Header lost the sent header: %v", res.Header)
	}
}

// P30, P31: the finishers after an abandoned one go on with a copy of the
// exchange taken just before the abandoned call, so they still see what the
// finishers before it stored.
func TestFinishAfterAbandonKeepsEarlierStateP30P31(t *testing.T) {
	log := &recLog{}
	release := make(chan struct{})
	defer close(release)
	a := &fake{name: "a", log: log, finish: true}
	b := &fake{name: "b", log: log, finish: true, fin: func(ctx context.Context, ex *gateway.Exchange) error {
		<-release // overruns its deadline: abandoned
		return nil
	}}
	c := &fake{name: "c", log: log, finish: true, fin: func(_ context.Context, ex *gateway.Exchange) error {
		gateway.SetState(ex, stateKey, "from c")
		return nil
	}}
	ch := buildFakes(t, Options{FinishTimeout: 10 * time.Millisecond, Grace: 5 * time.Millisecond}, a, b, c)
	ch.Run(context.Background(), req(), jsonUp("x"), ExchangeOptions{})
	var seen []call
	for _, cl := range log.all() {
		if cl.hook == "on_finish" && cl.plugin == "a" {
			seen = append(seen, cl)
		}
	}
	if len(seen) != 1 {
		t.Fatalf("a finished %d times", len(seen))
	}
	if !seen[0].hasState || seen[0].state != "from c" {
		t.Errorf("a's OnFinish saw state %q (%v), want the value c stored before b was abandoned", seen[0].state, seen[0].hasState)
	}
}
