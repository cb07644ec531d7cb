package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/probe"
	"github.com/abkit/abkit/sdk/gateway"
)

// addPipelineAxisCases are the cases that exist for an axis: every framing of
// every stream, a second instance, the lifecycle orders the contract
// allows, concurrent exchanges against the same ones in order, and a
// long run on one instance.
func addPipelineAxisCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "P19/framing/every-shape", Rules: []string{"P19", "P21"},
			Summary: "frames of every SSE framing are answered legally, whole and cut per byte",
			Explain: `Streams the chat, MCP and A2A event streams in every framing the
event-stream grammar allows: LF, CRLF and CR line ends, comment lines and
blocks, event:/id:/retry: fields, data split over several lines, empty
data events, a 64 KiB frame and a byte order mark, each delivered whole and
cut per byte. Every frame call must answer continue or a 4xx/5xx reject
within 1 s, without a panic, and the closing call (last=true) comes once.
A failure names the framing ("chat/cr, chunked per-byte"). It usually means
the plugin splits frames on "\n" only, expects "data: " with its space,
indexes the first data line, or chokes on an empty data value. Fix: parse
with sdk/sse (sse.Parse), which handles every framing.`,
			Applies: all(pipelineReady, behaviour(gateway.BehaviourStream)),
			Run:     p19FramingEveryShape,
		},
		{
			ID: "P31/instances/second-instance", Rules: []string{"P31", "P2"},
			Summary: "two instances in one process set the same extensions as one alone",
			Explain: `Makes two instances of the plugin in the same process (two chains) and
drives the standard exchanges on them alternately, then the same exchanges
on a fresh instance alone. Each exchange must carry the same extensions:
an instance's state is its own, and package-level state shared by the
instances of a process leaks one's exchanges into the other's.
A failure means a package-level variable (a cache, a last-seen value, a
global parser) holds per-exchange or per-instance data. Fix: keep it in
the instance, or per exchange in gateway.SetState.`,
			Applies: pipelineReady,
			Run:     p31InstancesSecondInstance,
		},
		{
			ID: "P31/concurrent/matches-sequential", Rules: []string{"P31", "P15", "P16"},
			Summary: "exchanges run at once on one instance set the same extensions as in order",
			Explain: `Drives the standard exchanges twice over on one instance, one at a time,
then the same sixteen exchanges all at once on a fresh instance, as a
gateway under load does. Each exchange must carry the same extensions
both ways (metamorphic: concurrency changes the order, not the results)
and every hook call must still answer legally within 1 s.
A failure means per-exchange data kept in the instance (a field written
by OnRequest and read by OnResponse), which concurrent exchanges
overwrite, or a data race. Fix: keep per-exchange values in
gateway.SetState, guard shared state with a mutex.`,
			Applies: pipelineReady,
			Run:     p31ConcurrentMatchesSequential,
		},
		{
			ID: "P20/long-run/hundreds", Rules: []string{"P15", "P16", "P20", "P31"},
			Summary: "hundreds of exchanges on one instance are answered legally, the last as the first",
			Explain: `Drives 300 exchanges (the standard ones and the request shapes, over
and over) through one instance, as a long-lived gateway does, and checks
every hook call; the extensions of each exchange in the last round must
equal those of the same exchange in the first.
A failure late in the run means state that grows with traffic: a buffer
never trimmed, a map of exchanges never cleaned in OnFinish, a counter
that overflows a fixed array, a slowdown. Fix: release per-exchange state
at the end of the exchange; bound every cache.`,
			Applies: pipelineReady,
			Run:     p20LongRunHundreds,
		},
		{
			ID: "P13/lifecycle/orders", Rules: []string{"P12", "P13", "P14"},
			Summary: "Stop without Start, Ready before and after Init, and concurrent Ready are answered",
			Explain: `Drives the lifecycle orders the contract allows besides the usual one: a
chain stopped without being started (Shutdown without Init), Ready asked
before Init and after it, and Ready asked by 8 callers at once while Init
runs. Each call must return within its budget (Shutdown 1 s, Ready 100 ms
plus the protocol's round trip) without a panic; Init still succeeds.
A failure means Shutdown assumes Init ran (closing a nil channel or
file), or Ready reads state Init has not made yet. Fix: make Shutdown a
no-op for what was never started; have Ready answer "not ready" until
Init is done.`,
			Applies: all(pipelineReady, needLifecycleBehaviour),
			Run:     p13LifecycleOrders,
		},
	} {
		r.Add(c)
	}
}

func p19FramingEveryShape(t *T) {
	rg := newRig(t, pipeline.Options{})
	cks := chunkers()
	var scs []scenario
	for _, sc := range streamScenarios()[:3] {
		scs = append(scs, alongFramings(sc)...)
	}
	for _, sc := range numbered(scs) {
		for _, ck := range []*chunker{&cks[0], &cks[1]} {
			if ck.name == "per-byte" && len(sc.body()) > 8<<10 {
				continue // the long frame per byte costs seconds and proves nothing more
			}
			rg.checkHooks("P19", rg.run(sc, ck, true), "on_response_frame", "on_response")
		}
	}
}

func p31InstancesSecondInstance(t *T) {
	scs := numbered(append(jsonScenarios(), streamScenarios()...))
	alone := newRig(t, pipeline.Options{})
	want := map[int]map[string]string{}
	for i, sc := range scs {
		want[i] = alone.run(sc, nil, false).extensions
	}
	a, b := newRig(t, pipeline.Options{}), newRig(t, pipeline.Options{})
	for i, sc := range scs {
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		got := first.run(sc, nil, false)
		second.run(scs[(i+1)%len(scs)], nil, false)
		t.DiffAt("P31", got.at+", on one of two instances", "extensions differ from those of the same exchange on an instance alone (-alone +two instances)", want[i], got.extensions)
	}
}

func p31ConcurrentMatchesSequential(t *T) {
	base := append(jsonScenarios(), streamScenarios()...)
	scs := numbered(append(append([]scenario(nil), base...), base...))
	seq := newRig(t, pipeline.Options{})
	want := make([]map[string]string, len(scs))
	for i, sc := range scs {
		want[i] = seq.run(sc, nil, false).extensions
	}
	con := newRig(t, pipeline.Options{})
	got := make([]outcome, len(scs))
	var wg sync.WaitGroup
	for i, sc := range scs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = con.run(sc, nil, false)
		}()
	}
	wg.Wait()
	for i, o := range got {
		con.checkHooks("P15", o, "on_request")
		con.checkHooks("P16", o, "on_response")
		t.DiffAt("P31", o.at+", concurrently", "extensions differ from the same exchange run in order (-in order +concurrently)", want[i], o.extensions)
	}
}

func p20LongRunHundreds(t *T) {
	rg := newRig(t, pipeline.Options{})
	pool := exchangeAxis()
	first := map[string]map[string]string{}
	start := time.Now()
	for i := range LongRun {
		if time.Since(start) > LongRunBudget {
			// A slow plugin (a slow finisher waits out its finish
			// deadline on every exchange) is other cases' business.
			t.Logf("long run cut after %d exchanges: its %v budget is spent", i, LongRunBudget)
			return
		}
		sc := pool[i%len(pool)]
		sc.pos, sc.of = i+1, LongRun
		o := rg.run(sc, nil, false)
		rg.checkHooks("P15", o, "on_request")
		rg.checkHooks("P16", o, "on_response")
		rg.checkHooks("P20", o, "on_response_frame")
		if i < len(pool) {
			first[sc.name] = o.extensions
		} else if i >= LongRun-len(pool) {
			t.DiffAt("P31", o.at, "extensions differ from the same exchange early in the run (-first round +last round)", first[sc.name], o.extensions)
		}
		if t.Failed() {
			return // one place is enough; the rest would repeat it
		}
	}
}

func p13LifecycleOrders(t *T) {
	f := t.Factory()
	cfg, err := WorkingConfig(f)
	if err != nil {
		t.Fatalf("P6", "no instance could be made: %v", err)
	}
	call := func(rule, what string, budget time.Duration, fn func(ctx context.Context) error) {
		ctx, cancel := context.WithTimeout(t.Context(), budget)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					done <- fmt.Errorf("panic: %v", p)
				}
			}()
			done <- fn(ctx)
		}()
		select {
		case err := <-done:
			broken := err != nil && (errors.Is(err, pluginhost.ErrDeadline) || errors.Is(err, pluginhost.ErrExited) || strings.HasPrefix(err.Error(), "panic: "))
			switch {
			case err == nil:
			case rule == "P14" && !broken:
				t.Logf("%s: not ready: %v", what, err) // not ready is an answer
			default:
				t.Errorf(rule, "%s: %s", what, callProblem(err.Error()))
			}
		case <-time.After(budget + 2*HookBudget):
			t.Errorf(rule, "deadline overrun: %s did not return within %v", what, budget)
		}
	}
	inst := func() gateway.Plugin {
		p, err := probe.New(f, cfg)
		if err != nil {
			t.Fatalf("P6", "no instance could be made: %v", err)
		}
		return p
	}
	ready := func(p gateway.Plugin, what string) {
		if r, ok := p.(gateway.Readier); ok {
			allow, _ := hookAllowance(t)
			call("P14", what, ReadyBudget+allow, r.Ready)
		}
	}
	// Shutdown without Init.
	if s, ok := inst().(gateway.Shutdowner); ok {
		call("P13", "Shutdown of an instance never started", time.Second, s.Shutdown)
	}
	// Ready before Init, concurrently during Init, after Init.
	p := inst()
	ready(p, "Ready before Init")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); ready(p, "Ready while Init runs") }()
	}
	if in, ok := p.(gateway.Initializer); ok {
		call("P12", "Init after Ready", 5*time.Second, in.Init)
	}
	wg.Wait()
	ready(p, "Ready after Init")
	if s, ok := p.(gateway.Shutdowner); ok {
		call("P13", "Shutdown after Init", time.Second, s.Shutdown)
	}
}

// needLifecycleBehaviour applies a case to a plugin implementing one of
// init, ready and shutdown.
func needLifecycleBehaviour(d *Reported) string {
	if !d.HasBehaviour(gateway.BehaviourInit) && !d.HasBehaviour(gateway.BehaviourReady) && !d.HasBehaviour(gateway.BehaviourShutdown) {
		return "the plugin implements none of init, ready and shutdown"
	}
	return ""
}

// alongConfigs runs drive on a chain of the plugin for every configuration
// of the config axis that makes an instance: the first one with every
// exchange of the exchange axis, the others with the standard exchanges
// (the budget). Every instance goes through the monitor, so a plugin
// whose capabilities depend on its config fails P2 here.
func alongConfigs(t *T, drive func(rg *rig, scs []scenario)) {
	f := t.Factory()
	if f == nil {
		t.Fatalf("P3", "the subject serves no pipeline factory although its descriptor lists family P")
	}
	cfgs := instanceConfigs(t, f)
	if len(cfgs) == 0 {
		t.Fatalf("P6", "no configuration of the config axis makes an instance")
	}
	for i, cfg := range cfgs {
		rg := newRigConfig(t, pipeline.Options{}, cfg, true)
		scs := append(jsonScenarios(), streamScenarios()...)
		if i == 0 {
			scs = exchangeAxis()
		}
		scs = numbered(scs)
		if len(cfgs) > 1 {
			for j := range scs {
				scs[j].name += ", config " + cfgLabel(cfg)
			}
		}
		drive(rg, scs)
	}
}
