package ratelimiter_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abkit/abkit/examples/plugins/ratelimiter"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
)

var allow = gateway.Outcome{Kind: gateway.OutcomeAllow, Status: 200}

// P26 P31: a slot reserved in OnRequest (typed state) is released in
// OnFinish; over the limit the plugin rejects 429 and, finishing its own
// rejection, releases nothing.
func TestReserveRelease_P26_P31(t *testing.T) {
	ctx := context.Background()
	p, err := ratelimiter.New(ratelimiter.Config{Limit: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := plugintest.NewRun("GET", "/", nil), plugintest.NewRun("GET", "/", nil), plugintest.NewRun("GET", "/", nil)
	for _, r := range []*plugintest.Run{a, b} {
		if act := r.Request(ctx, p); !act.IsContinue() {
			t.Fatalf("rejected under the limit: %+v", act)
		}
	}
	act := c.Request(ctx, p)
	if act.Status != 429 || !strings.Contains(act.Reason, "2 exchanges in flight") {
		t.Fatalf("over the limit: %+v", act)
	}
	// P26: the denying plugin is finished too; it holds no slot.
	c.Finish(ctx, gateway.Outcome{Kind: gateway.OutcomeDeny, Status: 429, DeniedBy: ratelimiter.Name}, p)
	if n := p.InFlight(""); n != 2 {
		t.Fatalf("in flight after finishing the rejected exchange = %d, want 2", n)
	}
	a.Finish(ctx, allow, p)
	a.Finish(ctx, allow, p) // P30: a second finish must not release twice
	if n := p.InFlight(""); n != 1 {
		t.Fatalf("in flight = %d, want 1", n)
	}
	d := plugintest.NewRun("GET", "/", nil)
	if act := d.Request(ctx, p); !act.IsContinue() {
		t.Fatalf("released slot not reusable: %+v", act)
	}
}

// Under -race: many goroutines never exceed the limit in flight, some are
// rejected, and every slot comes back.
func TestConcurrentNeverExceeds(t *testing.T) {
	const limit, workers, rounds = 4, 16, 200
	p, err := ratelimiter.New(ratelimiter.Config{Limit: limit}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cur, peak, rejected, admitted atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			ctx := context.Background()
			for range rounds {
				r := plugintest.NewRun("GET", "/", nil)
				if act := r.Request(ctx, p); !act.IsContinue() {
					rejected.Add(1)
					r.Finish(ctx, gateway.Outcome{Kind: gateway.OutcomeDeny, Status: 429, DeniedBy: ratelimiter.Name}, p)
					continue
				}
				admitted.Add(1)
				n := cur.Add(1)
				for {
					old := peak.Load()
					if n <= old || peak.CompareAndSwap(old, n) {
						break
					}
				}
				time.Sleep(10 * time.Microsecond)
				cur.Add(-1)
				r.Finish(ctx, allow, p)
			}
		})
	}
	wg.Wait()
	if peak.Load() > limit {
		t.Fatalf("peak in flight %d exceeds the limit %d", peak.Load(), limit)
	}
	if rejected.Load() == 0 || admitted.Load() == 0 {
		t.Fatalf("admitted %d, rejected %d: the test did not contend", admitted.Load(), rejected.Load())
	}
	if n := p.InFlight(""); n != 0 {
		t.Fatalf("slots leaked: %d in flight", n)
	}
}

// Window mode with a fake clock, per-client buckets, and refunds for
// exchanges a later plugin denied.
func TestWindow(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	p, err := ratelimiter.New(ratelimiter.Config{Limit: 2, Window: "1m", KeyHeader: "X-Client"}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	req := func(client string) (*plugintest.Run, gateway.Action) {
		r := plugintest.NewRun("GET", "/", nil)
		r.Ex.Request.Header.Set("X-Client", client)
		return r, r.Request(ctx, p)
	}
	r1, _ := req("a")
	r1.Finish(ctx, allow, p) // served: the slot stays used for the window
	now = now.Add(10 * time.Second)
	r2, _ := req("a")
	r2.Finish(ctx, gateway.Outcome{Kind: gateway.OutcomeDeny, Status: 403, DeniedBy: "guardrail"}, p) // refunded
	r3, _ := req("a")
	r3.Finish(ctx, allow, p)
	if _, act := req("a"); act.Status != 429 || !strings.Contains(act.Reason, "X-Client #") || !strings.Contains(act.Reason, "retry in 50s") {
		t.Fatalf("third in the window: %+v", act)
	}
	// The key is often a credential (X-Api-Key): the reason names the
	// bucket by a fingerprint, never by the key.
	if _, act := req("secret-key-a"); act.IsContinue() {
		_, act = req("secret-key-a")
		if _, act = req("secret-key-a"); strings.Contains(act.Reason, "secret-key-a") {
			t.Errorf("the reason quotes the key: %q", act.Reason)
		}
	}
	if _, act := req("b"); !act.IsContinue() {
		t.Fatalf("other client limited: %+v", act)
	}
	now = now.Add(51 * time.Second) // r1 ages out
	if _, act := req("a"); !act.IsContinue() {
		t.Fatalf("after the window: %+v", act)
	}
}

// P6: strict config; errors name the field.
func TestConfig_P6(t *testing.T) {
	for config, want := range map[string]string{
		``:                             `missing required field "limit"`,
		`{"limit":0}`:                  `field "limit"`,
		`{"limit":"5"}`:                `field "limit": want integer`,
		`{"limit":5,"window":"soon"}`:  `field "window"`,
		`{"limit":5,"window":"-1s"}`:   `field "window"`,
		`{"limit":5,"burst":2}`:        `unknown field "burst"`,
		`{"limit":5,"key_header":[1]}`: `field "key_header": want string`,
	} {
		var raw []byte
		if config != "" {
			raw = []byte(config)
		}
		if _, err := ratelimiter.Factory().New(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %s: err = %v, want %q", config, err, want)
		}
	}
	if err := config.CheckSchema(ratelimiter.Schema(), ratelimiter.Config{}); err != nil {
		t.Fatal(err)
	}
	if err := gateway.CheckDescription(plugintest.New(t, ratelimiter.Factory(), `{"limit":1}`).Capabilities().Description); err != nil {
		t.Fatal(err) // P5
	}
}
