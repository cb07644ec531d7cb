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
