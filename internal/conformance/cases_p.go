package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/probe"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
)

// pipelineReady applies a case that needs a chain of the plugin: the
// reference runtime refuses to build one for a plugin whose descriptor
// breaks P2, so those plugins fail the descriptor cases and skip these. A
// description that breaks P5 fails the P5 cases only: the runtime builds
// the chain with a warning (docs/contracts.md, the build refusal review).
func pipelineReady(d *Descriptor) string {
	if r := needPipeline(d); r != "" {
		return r
	}
	for _, o := range d.Pipeline.Observed {
		if !o.Capabilities.Equal(d.Pipeline.Capabilities) || o.Name != d.Name {
			return "the plugin's instances disagree about themselves (P2), so no chain can be built (see P2/capabilities/instances-agree)"
		}
	}
	return ""
}

// probeable skips the probe case of a plugin that could not be made and
// whose schema gives no config to try: it takes configuration (a schema)
// but describes neither fields nor examples, so no config it accepts is
// known. Its author has written no schema yet; that is not a P6 failure.
func probeable(d *Descriptor) string {
	if p := d.Pipeline; p != nil && p.ProbeError != "" && p.Config != nil && !p.Config.Describes() {
		return "not probed: the plugin takes configuration but its schema lists no fields and no examples, and it refuses to be made without config (" +
			p.ProbeError + "); list configs it accepts in ConfigSchema.Examples to have it probed"
	}
	return ""
}

func all(fs ...func(*Descriptor) string) func(*Descriptor) string {
	return func(d *Descriptor) string {
		for _, f := range fs {
			if r := f(d); r != "" {
				return r
			}
		}
		return ""
	}
}

func behaviour(b string) func(*Descriptor) string {
	return func(d *Descriptor) string {
		if !d.HasBehaviour(b) {
			return "the plugin does not implement the optional behaviour " + b
		}
		return ""
	}
}

func addDescriptorCases(r *Registry) {
	r.Add(&Case{
		ID: "P1/name/non-empty", Rules: []string{"P1"},
		Summary: "the plugin has a non-empty name without whitespace",
		Explain: `Reads the name from the plugin's descriptor (Describe). Chain entries,
requires lists and traces refer to plugins by this name, so it must be
non-empty; the suite also rejects whitespace, which no chain file can
refer to unquoted.
A failure means sdk.Plugin.Name (and, for a pipeline plugin, the
factory's Name) is empty or has spaces. Fix: give the plugin a short
kebab-case name.`,
		Run: p1NameNonEmpty,
	})
	r.Add(&Case{
		ID: "P2/name/instance-matches", Rules: []string{"P2", "P1"},
		Summary: "an instance's Name() equals the plugin's registered name",
		Explain: `Makes an instance through the plugin's factory (Describe does it) and
compares its Name() with the descriptor's name. The runtime rejects a
chain whose instance names itself differently.
A failure means Name() returns something other than the factory's name,
often a leftover from copying another plugin. Fix: return the same
constant from both.`,
		Applies: needPipeline,
		Run:     p2NameInstanceMatches,
	})
	r.Add(&Case{
		ID: "P2/capabilities/instances-agree", Rules: []string{"P2"},
		Summary: "two instances of one factory report the same capabilities",
		Explain: `Describe makes two instances and records what each reports; the case
compares them. Capabilities are type-level metadata (P2): every instance
must report the same value, whatever its configuration or history.
A failure means Capabilities() depends on config, a counter, time or
randomness. Fix: make it return a constant; a plugin whose behaviour
differs must be registered under another name.`,
		Applies: needPipeline,
		Run:     p2CapabilitiesInstancesAgree,
	})
	r.Add(&Case{
		ID: "P2/capabilities/across-processes", Rules: []string{"P2"}, FreshProcess: true,
		Summary: "two fresh plugin processes describe themselves identically",
		Explain: `Starts a second, fresh copy of the plugin and compares its whole
descriptor with the first one's: name, description, families,
capabilities, behaviours, config schema, manifest and hook specs.
A failure means what the plugin says about itself depends on the process:
the environment, the time, a random seed, map iteration order. Fix: make
the descriptor a constant of the binary.`,
		Run: p2CapabilitiesAcrossProcesses,
	})
	r.Add(&Case{
		ID: "P3/capabilities/fields", Rules: []string{"P3"},
		Summary: "requires and requires_any name plugins: non-empty, distinct, not itself",
		Explain: `Checks the capability fields of a probe instance: every name in
requires and requires_any is non-empty, has no whitespace, appears once,
and is not the plugin's own name (a plugin cannot stand before itself).
A failure means a malformed dependency list; the chain builder would
reject every chain. Fix: list the names of the plugins yours depends on.`,
		Applies: needPipeline,
		Run:     p3CapabilitiesFields,
	})
	r.Add(&Case{
		ID: "P5/description/plugin", Rules: []string{"P5"},
		Summary: "the plugin's description is one line of at most 80 characters",
		Explain: `Checks the descriptor's description: non-empty, one line (no line
breaks of any kind), at most 80 characters counted as runes. Catalog
panes and the plugin list endpoint show it as is.
Fix: shorten it; put details in your README.`,
		Run: p5DescriptionPlugin,
	})
	r.Add(&Case{
		ID: "P5/description/capabilities", Rules: []string{"P5"},
		Summary: "the capability description is one line of at most 80 characters",
		Explain: `Checks Capabilities().Description of a probe instance, which the
pipeline shows to operators, under the same rule as the plugin's own
description. The reference runtime refuses to build a chain with a bad
one, so the exchange cases are skipped until it is fixed.
Fix: shorten it to one line of at most 80 characters.`,
		Applies: needPipeline,
		Run:     p5DescriptionCapabilities,
	})
	r.Add(&Case{
		ID: "P6/instance/default-config", Rules: []string{"P6"},
		Summary: "an instance can be made with no config, the defaults or a sample config",
		Explain: `Describe tries to make instances with no config block, then one made of
the schema's defaults, then a sample with every field set. The suite
needs one instance to test anything else.
A failure means the factory refuses all three (or panics, or returns
nil). Fix: accept an empty config with sensible defaults, or give the
required fields defaults in the schema, or list configs it accepts in
ConfigSchema.Examples (tried last).
A plugin that takes configuration but describes none of it (a schema
with no fields and no examples) and refuses to be made without it is
not probed: the case is skipped with that reason, not failed.`,
		Applies: all(needFamily(family.Pipeline), probeable),
		Run:     p6InstanceDefaultConfig,
	})
}

func p1NameNonEmpty(t *T) {
	d := t.Describe()
	switch {
	// The source asks only for a case-sensitive string; a
	// non-empty name without whitespace is what abkit's chains
	// can refer to (choice P1.names).
	case d.Name == "":
		t.ChoiceErrorf("P1.names", "P1", "the descriptor's name is empty")
	case strings.IndexFunc(d.Name, unicode.IsSpace) >= 0:
		t.ChoiceErrorf("P1.names", "P1", "name %q contains whitespace", d.Name)
	}
}

func p2NameInstanceMatches(t *T) {
	d := t.Describe()
	for i, o := range d.Pipeline.Observed {
		if o.Name != d.Name {
			t.Errorf("P2", "instance %d reports Name() %q, the plugin is registered as %q", i+1, o.Name, d.Name)
		}
	}
}

func p2CapabilitiesInstancesAgree(t *T) {
	d := t.Describe()
	for i, o := range d.Pipeline.Observed {
		t.Diff("P2", fmt.Sprintf("capabilities of instance %d differ from the first instance's", i+1), d.Pipeline.Capabilities, o.Capabilities)
	}
}

func p2CapabilitiesAcrossProcesses(t *T) {
	other, err := t.Launch()
	if err != nil {
		t.Fatalf("P2", "a second copy of the plugin could not be started: %v", err)
	}
	t.Diff("P2", "the second process describes itself differently", t.Describe(), other.Describe())
}

func p3CapabilitiesFields(t *T) {
	d := t.Describe()
	c := d.Pipeline.Capabilities
	for field, names := range map[string][]string{"requires": c.Requires, "requires_any": c.RequiresAny} {
		seen := map[string]bool{}
		for _, n := range names {
			switch {
			case n == "" || strings.IndexFunc(n, unicode.IsSpace) >= 0:
				t.Errorf("P3", "%s holds %q, which names no plugin", field, n)
			case n == d.Name:
				t.Errorf("P3", "%s names the plugin itself (%q)", field, n)
			case seen[n]:
				t.Errorf("P3", "%s names %q twice", field, n)
			}
			seen[n] = true
		}
	}
}

func p5DescriptionPlugin(t *T) {
	if err := gateway.CheckDescription(t.Describe().Description); err != nil {
		t.Errorf("P5", "%v", err)
	}
}

func p5DescriptionCapabilities(t *T) {
	if err := gateway.CheckDescription(t.Describe().Pipeline.Capabilities.Description); err != nil {
		t.Errorf("P5", "%v", err)
	}
}

func p6InstanceDefaultConfig(t *T) {
	d := t.Describe()
	if d.Pipeline == nil {
		t.Fatalf("P6", "the descriptor lists family P but has no pipeline information")
	}
	if d.Pipeline.ProbeError != "" {
		t.Errorf("P6", "%s", d.Pipeline.ProbeError)
	}
}

// initBudget is the deadline of Init in the lifecycle cases.
const initBudget = 5 * time.Second

func addLifecycleCases(r *Registry) {
	r.Add(&Case{
		ID: "P12/init/once", Rules: []string{"P12"},
		Summary: "Init succeeds once, promptly, and the plugin then serves an exchange",
		Explain: `Builds a chain of the plugin, starts it (Init once, with a 5 s
deadline), drives one exchange, and stops it.
A failure means Init returned an error with the probe config, overran
its deadline, or the plugin misbehaved right after it. Fix: make Init
succeed with the default configuration and honour ctx.`,
		Applies: all(pipelineReady, behaviour(gateway.BehaviourInit)),
		Run:     p12InitOnce,
	})
	r.Add(&Case{
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
	})
	r.Add(&Case{
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
	})
	r.Add(&Case{
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
	})
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

func addExchangeCases(r *Registry) {
	r.Add(&Case{
		ID: "P15/hooks/legal-actions", Rules: []string{"P15", "P16"},
		Summary: "OnRequest and OnResponse answer continue or a 4xx/5xx reject within 1 s",
		Explain: `Drives JSON, plain and event-stream exchanges (chat completions, MCP,
A2A, a health check) and the request shapes of the exchange axis (every
HTTP method, bodies absent, Content-Length/Origin/Authorization headers,
upstream statuses 1xx–5xx) through the reference pipeline, with every
configuration of the config axis, and checks every OnRequest and
OnResponse call: no panic, no dead process, a reject carries a status in
400–599, and each answer comes within 1 s.
A failure names the hook and the exchange. Fix: recover from bad input
instead of panicking, reject with a 4xx status, keep hooks off slow I/O.`,
		Applies: pipelineReady,
		Run:     p15HooksLegalActions,
	})
	r.Add(&Case{
		ID: "P17/body-write/declared-only", Rules: []string{"P17"},
		Summary: "the plugin writes only the bodies its capabilities declare",
		Explain: `Drives the standard exchanges and the request shapes, with every
configuration of the config axis, and collects every body write the
plugin attempted. A write to the request body without
writes_request_body, or to the response body without
writes_response_body, is refused by the host and never reaches the wire.
A failure means the plugin calls SetRequestBody/SetResponseBody without
declaring it. Fix: declare the capability (only one plugin per direction
may), or stop writing.`,
		Applies: pipelineReady,
		Run:     p17BodyWriteDeclaredOnly,
	})
}

func p15HooksLegalActions(t *T) {
	alongConfigs(t, func(rg *rig, scs []scenario) {
		for _, sc := range scs {
			o := rg.run(sc, nil, false)
			rg.checkHooks("P15", o, "on_request")
			rg.checkHooks("P16", o, "on_response")
		}
	})
}

func p17BodyWriteDeclaredOnly(t *T) {
	alongConfigs(t, func(rg *rig, scs []scenario) {
		for _, sc := range scs {
			o := rg.run(sc, nil, false)
			for _, w := range o.res.Warnings {
				if w.Rule == "P17" && w.Plugin == rg.name {
					t.ErrorAt("P17", o.at, "%s", w.Msg)
				}
			}
		}
	})
}

// streamCase is one data-driven streaming case.
type streamCase struct {
	id, rule, summary, explain string
	rules                      []string
	scenario                   func() scenario
}

func addStreamCases(r *Registry) {
	chat := streamScenarios()[0]
	cases := []streamCase{
		{id: "P21/last-exactly-once/zero-frames", rule: "P21", summary: "handles a stream of zero frames and its single last call",
			explain: `Streams an event-stream response that holds only a comment block, so
the plugin gets no frame, just the one closing call with last=true and
an empty frame. A failure means the plugin assumed at least one frame
(an index out of range, a nil dereference on the closing call).`,
			scenario: func() scenario {
				s := chat
				s.name, s.events = "zero-frames", []string{": keep-alive\n\n"}
				return s
			}},
		{id: "P19/frames/one-frame", rule: "P19", summary: "handles a stream of exactly one frame",
			explain: `Streams an event-stream response of one event, then the closing call.
A failure means the plugin mishandles the smallest non-empty stream.`,
			scenario: func() scenario {
				s := chat
				s.name, s.events = "one-frame", chatEvents("Hello")
				return s
			}},
		{id: "P20/frames/many-frames", rule: "P20", rules: []string{"P19", "P20"}, summary: "handles a stream of 200 frames in order",
			explain: `Streams 200 events. Each frame must be answered within 1 s and the
plugin must not fail part-way (buffers that overflow, per-frame
allocations that are never released, a crash under load).`,
			scenario: func() scenario {
				s := chat
				s.name, s.events = "many-frames", append(chatEvents(manyDeltas(200)...), "data: [DONE]\n\n")
				return s
			}},
		{id: "P22/json-one-frame/whole-body", rule: "P22", summary: "handles a JSON body delivered as one last frame",
			explain: `Answers with a non-streamed JSON body. A streaming plugin gets exactly
one OnResponseFrame call with the whole body and last=true, and no
closing call after it. A failure means the plugin expected SSE framing
or a separate closing call.`,
			scenario: func() scenario { return jsonScenarios()[0] }},
		{id: "P21/last-exactly-once/early-end", rule: "P21", summary: "handles a stream the upstream ends early",
			explain: `Streams three events, then the upstream connection fails. The plugin
still gets exactly one closing call with last=true (the exchange ends
with an error outcome). A failure means the plugin expected a
protocol-level end marker before the closing call.`,
			scenario: func() scenario {
				s := chat
				s.name, s.events, s.early = "early-end", chatEvents("Hel", "lo", " wor"), true
				return s
			}},
	}
	for _, sc := range cases {
		rules := sc.rules
		if rules == nil {
			rules = []string{sc.rule}
		}
		r.Add(&Case{
			ID: sc.id, Rules: rules, Summary: sc.summary,
			Explain: sc.explain + `
Every frame call must answer continue or a 4xx/5xx reject, within 1 s,
without a panic. Fix: treat every frame as untrusted input and the
closing call (last=true, empty frame) as the place to finish parsing.`,
			Applies: all(pipelineReady, behaviour(gateway.BehaviourStream)),
			Run: func(t *T) {
				rg := newRig(t, pipeline.Options{})
				base := sc.scenario()
				if !base.sse() || sc.rule == "P20" {
					// One JSON body has no framing; 200 frames in every
					// framing is the framing case's business.
					rg.checkHooks(sc.rule, rg.run(base, nil, false), "on_response_frame")
					return
				}
				for _, s := range numbered(alongFramings(base)) {
					rg.checkHooks(sc.rule, rg.run(s, nil, false), "on_response_frame")
				}
			},
		})
	}
	r.Add(&Case{
		ID: "P19/chunking/independent", Rules: []string{"P19", "P20", "P24"},
		Summary: "the extensions and answers do not depend on how the stream was chunked",
		Explain: `Streams the same chat, MCP and A2A event streams cut into chunks in
four ways (whole, per line, every 7 bytes, per byte), with the upstream
reusing its read buffer between chunks as a network read does. The host
cuts the stream into the same frames every time, so the plugin's answers
and the extensions it sets must be the same for every chunking.
A failure shows the extensions as a diff against the whole-body run. It
usually means the plugin keeps a frame slice past its call (P24) and
parses it later, when the buffer holds other bytes. Fix: copy what you
keep (bytes.Clone, or append to your own buffer).`,
		Applies: all(pipelineReady, behaviour(gateway.BehaviourStream)),
		Run:     p19ChunkingIndependent,
	})
	r.Add(&Case{
		ID: "P24/borrowed-bytes/poisoned-frames", Rules: []string{"P24"},
		Summary: "the plugin copies frame bytes it keeps past the call",
		Explain: `Streams the standard event streams twice: once normally, once with the
host overwriting each frame's buffer with 0xDB after the call
(pipeline.Options.PoisonFrames). The extensions and answers must match.
Across the protocol every frame arrives in a fresh message, so this case
catches a plugin only when the suite runs in-process (from go test).
A failure means the plugin keeps the frame slice (or a sub-slice, or a
string made with unsafe) past the call. Fix: copy what you keep.`,
		Applies: all(pipelineReady, behaviour(gateway.BehaviourStream)),
		Run:     p24BorrowedBytesPoisonedFrames,
	})
}

func p19ChunkingIndependent(t *T) {
	rg := newRig(t, pipeline.Options{})
	cks := chunkers()
	for _, sc := range numbered(streamScenarios()) {
		ref := rg.run(sc, &cks[0], false)
		for i := 1; i < len(cks); i++ {
			got := rg.run(sc, &cks[i], true)
			t.DiffAt("P19", got.at, "extensions differ from the whole-body run", ref.extensions, got.extensions)
			t.DiffAt("P19", got.at, "answers differ from the whole-body run", answers(ref, rg.name), answers(got, rg.name))
		}
	}
}

func p24BorrowedBytesPoisonedFrames(t *T) {
	plain := newRig(t, pipeline.Options{})
	poisoned := newRig(t, pipeline.Options{PoisonFrames: true})
	for _, sc := range numbered(streamScenarios()) {
		ref := plain.run(sc, nil, false)
		got := poisoned.run(sc, nil, false)
		t.DiffAt("P24", got.at, "with poisoned frames the extensions differ", ref.extensions, got.extensions)
		t.DiffAt("P24", got.at, "with poisoned frames the answers differ", answers(ref, plain.name), answers(got, plain.name))
	}
}

// answers lists the plugin's answers in an exchange, without timings.
func answers(o outcome, plugin string) []string {
	var out []string
	for _, e := range o.events {
		if e.Plugin == plugin {
			out = append(out, fmt.Sprintf("%s frame=%s last=%v %s %d %s %s", e.Hook, fmtFrame(e.Frame), e.Last, e.Action, e.Status, e.Reason, e.Error))
		}
	}
	return out
}

// finishTimeout is the deadline of OnFinish in the finish cases.
const finishTimeout = time.Second

// checkFinish fails the plugin's OnFinish calls in o that overran their
// deadline, panicked or wrote a body.
func checkFinish(t *T, rg *rig, o outcome) {
	for _, e := range o.events {
		if e.Plugin != rg.name || e.Hook != "on_finish" {
			continue
		}
		switch {
		case strings.Contains(e.Error, pipeline.ErrAbandoned.Error()),
			// Across the process boundary the finish deadline is the
			// gRPC call's, which fires before the runtime abandons the
			// call: the adapter reports it as a failed call (a panic
			// to the runtime), which is an overrun, not a P30 panic.
			strings.Contains(e.Error, "on_finish: "+pluginhost.ErrDeadline.Error()):
			// One is enough: each more would cost another deadline.
			t.FatalAt("P28", o.at+", on_finish", "deadline overrun: OnFinish did not return within its %v deadline (ctx.Done() was ignored); it was abandoned", finishTimeout)
		case strings.Contains(e.Error, "panic"):
			t.ErrorAt("P30", o.at+", on_finish", "%s", callProblem(e.Error))
		}
	}
	for _, w := range o.res.Warnings {
		if w.Rule == "P30" && w.Plugin == rg.name && strings.Contains(w.Msg, "body write") {
			t.ErrorAt("P30", o.at+", on_finish", "%s", w.Msg)
		}
	}
}

func addFinishCases(r *Registry) {
	applies := all(pipelineReady, behaviour(gateway.BehaviourFinish))
	r.Add(&Case{
		ID: "P28/finish/within-deadline", Rules: []string{"P28", "P30"},
		Summary: "OnFinish returns within its 1 s deadline after allowed and streamed exchanges",
		Explain: `Drives the standard exchanges with a 1 s finish deadline. OnFinish gets
a fresh context carrying it; the host abandons a call still running
100 ms after it. OnFinish must not panic or write bodies.
A failure means OnFinish blocks (a channel send, an unbounded flush, a
network call without ctx) or panics. Fix: honour ctx.Done(), hand slow
work to a bounded background queue.`,
		Applies: applies,
		Run:     p28FinishWithinDeadline,
	})
	r.Add(&Case{
		ID: "P26/finish/nothing-reserved", Rules: []string{"P26", "P28", "P30"},
		Summary: "OnFinish copes with exchanges that failed upstream or were cancelled",
		Explain: `Drives exchanges that end badly after the plugin's OnRequest ran: the
upstream does not answer (error outcome, 502), and the stream ends
early. OnFinish runs for each (P26) and must return within its deadline
without panicking, even though the usual response-side state was never
built ("nothing was reserved").
A failure means OnFinish assumes the response hooks ran. Fix: look up
your per-exchange state and do nothing when it is missing.`,
		Applies: applies,
		Run:     p26FinishNothingReserved,
	})
	r.Add(&Case{
		ID: "P26/finish/unseen-request", Rules: []string{"P26", "P29", "P30"},
		Summary: "OnFinish tolerates an exchange whose request it never saw",
		Explain: `Calls OnFinish on a fresh instance for an exchange it was never shown
(no OnRequest), with a deny outcome, as a restarted plugin process or a
host recovering from a crash may. It must return within its 1 s deadline
without panicking.
A failure means OnFinish dereferences per-exchange state it expects
OnRequest to have set. Fix: treat missing state as "nothing to do".`,
		Applies: applies,
		Run:     p26FinishUnseenRequest,
	})
}

func p28FinishWithinDeadline(t *T) {
	rg := newRig(t, pipeline.Options{FinishTimeout: finishTimeout})
	for _, sc := range numbered(append(jsonScenarios(), streamScenarios()...)) {
		checkFinish(t, rg, rg.run(sc, nil, false))
	}
}

func p26FinishNothingReserved(t *T) {
	rg := newRig(t, pipeline.Options{FinishTimeout: finishTimeout})
	// An upstream that never answered.
	ctx := t.Context()
	h := http.Header{"X-Client-Id": {"conformance"}}
	rec := rg.t.rec
	ex := rg.chain.NewExchange(pipeline.Request{Method: "GET", URL: "/unreachable", Header: h}, pipeline.ExchangeOptions{Trace: rec})
	n := len(rec.Events())
	if ex.Request(ctx) {
		ex.Respond(ctx, pipeline.Upstream{Err: errors.New("conformance: upstream refused the connection")})
	}
	res := ex.Finish()
	checkFinish(t, rg, outcome{at: "exchange 1 of 2 (upstream-failed, no answer from the upstream)", res: res, events: rec.Events()[n:]})
	s := streamScenarios()[0]
	s.name, s.events, s.early, s.pos, s.of = "early-end", chatEvents("Hel"), true, 2, 2
	checkFinish(t, rg, rg.run(s, nil, false))
}

func p26FinishUnseenRequest(t *T) {
	f := t.Factory()
	cfg, err := WorkingConfig(f)
	if err != nil {
		t.Fatalf("P26", "no instance could be made: %v", err)
	}
	p, err := probe.New(f, cfg)
	if err != nil {
		t.Fatalf("P26", "no instance could be made: %v", err)
	}
	fin, ok := p.(gateway.Finisher)
	if !ok {
		t.Fatalf("P26", "the instance does not implement OnFinish although the descriptor lists the finish behaviour")
	}
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{Method: "POST", URL: "/never-seen", Header: http.Header{}})
	ctl.SetResponse(gateway.Response{Status: 403})
	ctl.SetOutcome(gateway.Outcome{Kind: gateway.OutcomeDeny, Status: 403, DeniedBy: "some-other-plugin", Reason: "conformance", Duration: time.Millisecond})
	caps := p.Capabilities().Normalize()
	ctl.Enter(p.Name(), gateway.PhaseFinish, caps.WritesRequestBody, caps.WritesResponseBody)
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	done := make(chan error, 1)
	overran := errors.New("overran")
	go func() {
		defer func() {
			if r := recover(); r != nil {
				// Across the boundary the deadline is the gRPC
				// call's: the adapter panics with a deadline error.
				if e, ok := r.(error); ok && errors.Is(e, pluginhost.ErrDeadline) {
					done <- overran
					return
				}
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- fin.OnFinish(ctx, ex)
	}()
	select {
	case err := <-done:
		if err == overran {
			t.Errorf("P28", "deadline overrun: OnFinish of an unseen exchange did not return within its %v deadline (ctx.Done() was ignored)", finishTimeout)
			return
		}
		if err != nil && strings.HasPrefix(err.Error(), "panic") {
			t.Errorf("P30", "OnFinish of an unseen exchange panicked: %v", err)
		}
		t.Logf("OnFinish of an unseen exchange returned %v", err)
	case <-time.After(finishTimeout + 100*time.Millisecond):
		t.Errorf("P28", "deadline overrun: OnFinish of an unseen exchange did not return within its %v deadline", finishTimeout)
	case <-t.Context().Done():
	}
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
