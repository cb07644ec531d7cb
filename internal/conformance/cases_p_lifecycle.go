package conformance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/sdk/gateway"
)

// initBudget is the deadline of Init in the lifecycle cases.
const initBudget = 5 * time.Second

// addPipelineLifecycleCases registers the cases of Init, Shutdown and Ready
// (P12-P14).
func addPipelineLifecycleCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "P12/init/once", Rules: []string{"P12"},
			Summary: "Init succeeds once, promptly, and the plugin then serves an exchange",
			Explain: `Builds a chain of the plugin, starts it (Init once, with a 5 s
deadline), drives one exchange, and stops it.
A failure means Init returned an error with the probe config, overran
its deadline, or the plugin misbehaved right after it. Fix: make Init
succeed with the default configuration and honour ctx.`,
			Applies: all(pipelineReady, behaviour(gateway.BehaviourInit)),
			Run:     p12InitOnce,
		},
		{
			ID: "P13/shutdown/within-deadline", Rules: []string{"P13"},
			Summary: "Shutdown returns within its context's deadline",
			Explain: `Starts a chain of the plugin, serves one exchange, then stops it with
a 1 s deadline. The runtime abandons a Shutdown that is still running
100 ms after the deadline and reports it.
A failure means Shutdown ignores ctx (waits on a channel, a flush or a
network call without a deadline) or returns an error. Fix: select on
ctx.Done() and give up cleanly.`,
			Applies: all(pipelineReady, behaviour(gateway.BehaviourShutdown)),
			Run:     p13ShutdownWithinDeadline,
		},
		{
			ID: "P14/ready/fast", Rules: []string{"P14"},
			Summary: "Ready answers within 100 ms of the protocol's own round trip, before and after start",
			Explain: `Calls Ready 20 times before Start and 20 times after, each call
interleaved with an Echo round trip to the same process (the SDK answers
Echo without running plugin code), and judges the median Ready call less
the median Echo: what the plugin itself spends must be at most 100 ms.
Readiness probes are called often, so they must be cheap; a busy machine
slows Echo and Ready alike, so it does not change the verdict, while a
plugin that does real work in Ready is slow only there. Each call has a
deadline of 100 ms plus ten Echo round trips; more than one call in ten
running out its deadline fails too, so a Ready that never answers fails
however slow the round trip was.
A failure means Ready does real work (a network round trip, a lock held
during I/O) or blocks. Fix: keep a state flag up to date elsewhere and
have Ready read it.`,
			Applies: all(pipelineReady, behaviour(gateway.BehaviourReady)),
			Run:     p14ReadyFast,
		},
		{
			ID: "P14/ready/concurrent-consistent", Rules: []string{"P14"}, Choice: "P14.ready",
			Summary: "Ready gives one answer under 8 concurrent callers",
			Explain: `After Start, 8 goroutines call Ready 25 times each, each call
interleaved with an Echo round trip as in P14/ready/fast. With nothing
changing, every call that answers must agree (all ready, or all not
ready); the median Ready call less the median Echo must be at most 100 ms,
and at most one call in ten may run out its deadline (100 ms plus ten
Echo round trips). A busy machine slows both calls alike; a plugin that
serialises callers slows only Ready.
A failure means Ready races (unsynchronised state) or serialises callers
behind a slow lock. Fix: use an atomic or a RWMutex for the flag.`,
			Applies: all(pipelineReady, behaviour(gateway.BehaviourReady)),
			Run:     p14ReadyConcurrentConsistent,
		},
	} {
		r.Add(c)
	}
}

func p12InitOnce(t *T) {
	rg := newRig(t, pipeline.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), initBudget)
	defer cancel()
	start := time.Now()
	if err := rg.chain.Start(ctx); err != nil {
		t.Fatalf("P12", "Init failed: %v", err)
	}
	if d := time.Since(start); d > initBudget {
		t.Errorf("P12", "Init took %v, beyond its %v deadline", d, initBudget)
	}
	rg.run(jsonScenarios()[0], nil, false)
	_ = rg.chain.Stop(t.Context())
}

func p13ShutdownWithinDeadline(t *T) {
	rg := newRig(t, pipeline.Options{})
	if err := rg.chain.Start(t.Context()); err != nil {
		t.Fatalf("P13", "Init failed, so Shutdown could not be checked: %v", err)
	}
	rg.run(jsonScenarios()[0], nil, false)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start := time.Now()
	err := rg.chain.Stop(ctx)
	t.Logf("shutdown took %v: %v", time.Since(start), err)
	switch {
	case errors.Is(err, pipeline.ErrAbandoned):
		t.Errorf("P13", "Shutdown overran its 1 s deadline and was abandoned")
	case err != nil:
		t.Errorf("P13", "Shutdown failed: %v", err)
	}
}

func p14ReadyFast(t *T) {
	rg := newRig(t, pipeline.Options{})
	probe := func(when string) {
		lat := measureReady(t, rg, 1, 20)
		if lat.timedOut > lat.calls/10 {
			t.Fatalf("P14", "%d of %d Ready calls %s ran out their %v deadline (100 ms plus ten protocol round trips)", lat.timedOut, lat.calls, when, lat.deadline.Round(time.Millisecond))
		}
		if own := lat.own(); own > ReadyBudget {
			t.Fatalf("P14", "Ready %s took %v of its own (median %v less the median protocol round trip %v, 20 calls, slowest %v); answer within %v", when,
				own.Round(time.Millisecond), lat.ready.Round(time.Millisecond), lat.echo.Round(time.Millisecond), lat.slowest.Round(time.Millisecond), ReadyBudget)
		}
	}
	probe("before Start")
	if err := rg.chain.Start(t.Context()); err != nil {
		t.Fatalf("P14", "Init failed: %v", err)
	}
	probe("after Start")
	_ = rg.chain.Stop(t.Context())
}

func p14ReadyConcurrentConsistent(t *T) {
	rg := newRig(t, pipeline.Options{})
	if err := rg.chain.Start(t.Context()); err != nil {
		t.Fatalf("P14", "Init failed: %v", err)
	}
	defer rg.chain.Stop(t.Context())
	lat := measureReady(t, rg, 8, 25)
	if len(lat.answers) > 1 {
		t.Errorf("P14", "Ready answered ready %d times and not ready %d times with nothing changing", lat.answers[true], lat.answers[false])
	}
	if own := lat.own(); own > ReadyBudget {
		t.Errorf("P14", "concurrent Ready took %v of its own (median %v less the median protocol round trip %v, %d calls); answer within %v",
			own.Round(time.Millisecond), lat.ready.Round(time.Millisecond), lat.echo.Round(time.Millisecond), lat.calls, ReadyBudget)
	}
	if lat.timedOut > lat.calls/10 {
		t.Errorf("P14", "%d of %d concurrent Ready calls ran out their %v deadline", lat.timedOut, lat.calls, lat.deadline.Round(time.Millisecond))
	}
}

// readyLatency is what measureReady saw.
type readyLatency struct {
	ready, echo, slowest time.Duration // medians of Ready and Echo; slowest Ready
	deadline             time.Duration // each Ready call's deadline
	calls, timedOut      int
	answers              map[bool]int // ready or not, for calls that answered
}

// own is the time Ready spent beyond the protocol's round trip.
func (l readyLatency) own() time.Duration { return max(l.ready-l.echo, 0) }

// measureReady calls Ready n times from each of g goroutines, each call
// after an Echo round trip to the same process, so that Ready is judged
// against what the machine and the protocol cost at that moment (P14
// separates a slow machine from a slow plugin this way). An in-process
// subject has no round trip: Echo costs nothing there.
func measureReady(t *T, rg *rig, g, n int) readyLatency {
	echo, _ := t.Subject().(echoer)
	ping := func(ctx context.Context) time.Duration {
		if echo == nil {
			return 0
		}
		start := time.Now()
		_ = echo.Echo(ctx)
		return time.Since(start)
	}
	// The deadline: 100 ms plus ten round trips measured before starting.
	var warm []time.Duration
	for range 5 {
		warm = append(warm, ping(t.Context()))
	}
	lat := readyLatency{deadline: ReadyBudget + 10*median(warm), answers: map[bool]int{}}
	var mu sync.Mutex
	var readies, echoes []time.Duration
	var wg sync.WaitGroup
	for range g {
		wg.Go(func() {
			for range n {
				e := ping(t.Context())
				ctx, cancel := context.WithTimeout(t.Context(), lat.deadline)
				start := time.Now()
				err := rg.chain.Ready(ctx)
				d := time.Since(start)
				late := ctx.Err() != nil
				cancel()
				mu.Lock()
				readies, echoes = append(readies, d), append(echoes, e)
				if late {
					lat.timedOut++ // no answer about readiness
				} else {
					lat.answers[err == nil]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	lat.calls = len(readies)
	lat.ready, lat.echo, lat.slowest = median(readies), median(echoes), slices.Max(readies)
	return lat
}

// echoer is a subject in its own process that can time a round trip to
// it without running plugin code.
type echoer interface {
	Echo(ctx context.Context) error
}

// median returns the middle of ds (the upper middle for an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
