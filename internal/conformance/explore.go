package conformance

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/trace"
)

// Exploration for plugins (conformance run --plugin BIN --explore N):
// instead of the fixed cases, one case drives the plugin with N exchanges
// generated from the axes (a configuration, then scenarios, framings and
// chunkings drawn by a seeded generator) on one instance, with every
// exchange check and the monitors on. A finding is shrunk to the shortest
// sequence of exchanges that still produces a finding of the same rule,
// and printed with the seed that reruns it.

// ExploreID is the ID of the exploration case.
const ExploreID = "explore/exchanges"

// ShrinkBudget bounds the time spent shrinking a finding.
const ShrinkBudget = 20 * time.Second

// step is one generated exchange.
type step struct {
	sc     scenario
	ck     int // index into chunkers()
	reuse  bool
	config string // set on the first step: the instance's config
}

func (s step) String() string {
	ck := chunkers()[s.ck].name
	kind := "not streamed"
	if s.sc.sse() {
		kind = "streamed, chunked " + ck
		if s.reuse {
			kind += ", read buffer reused"
		}
	}
	return fmt.Sprintf("%s %s %s (upstream %d, %s)", s.sc.name, s.sc.method, s.sc.url, s.sc.status, kind)
}

// generate draws n steps and a config from seed. The draws depend only on
// the seed and the plugin's config schema, so the same seed reruns the
// same sequence.
func generate(cfgs []json.RawMessage, n int, seed uint64) (json.RawMessage, []step) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var pool []scenario
	pool = append(pool, exchangeAxis()...)
	for _, sc := range streamScenarios()[:3] {
		pool = append(pool, alongFramings(sc)...)
	}
	var cfg json.RawMessage
	if len(cfgs) > 0 {
		cfg = cfgs[r.IntN(len(cfgs))]
	}
	steps := make([]step, n)
	for i := range steps {
		steps[i] = step{sc: pool[r.IntN(len(pool))], ck: r.IntN(len(chunkers())), reuse: r.IntN(2) == 1}
	}
	return cfg, steps
}

// ExploreSuite is the registry of one exploration: n generated exchanges
// from seed.
func ExploreSuite(n int, seed uint64) *Registry {
	r := NewRegistry()
	r.Add(&Case{
		ID: ExploreID, Rules: []string{"P2", "P15", "P16", "P17", "P19", "P20", "P21", "P31", "P32", "P33", "P34", "P36", "X1"},
		Summary: fmt.Sprintf("%d generated exchanges (seed %d) on one instance, every check and monitor on", n, seed),
		Explain: `Draws a configuration of the config axis and a sequence of exchanges from
the axes (the standard exchanges, the request shapes, every SSE framing,
every chunking) with the seed, drives them through one instance and checks
every exchange as the cases do: hook answers legal and in time (P15, P16,
P19, P20, P21), body writes declared (P17), header changes explained and
before the head (P32, P33), rejection headers (P34), identities (P36),
extension values valid (X1), and the monitors (P2). A finding is shrunk
to the shortest sequence that still gives a finding of the same rule and
printed step by step with the seed; rerun it with the same --explore and
--seed.`,
		Applies: pipelineReady,
		Run:     func(t *T) { explore(t, n, seed) },
	})
	return r
}

// finding is the first finding of a sequence.
type finding struct {
	f     Failure
	after int // exchanges driven when it appeared
}

func explore(t *T, n int, seed uint64) {
	f := t.Factory()
	if f == nil {
		t.Fatalf("P3", "the subject serves no pipeline factory although its descriptor lists family P")
	}
	cfg, steps := generate(instanceConfigs(t, f), n, seed)
	t.Logf("explore: seed %d, %d exchanges, config %s", seed, n, cfgLabel(cfg))
	first, ok := runSteps(t, cfg, steps)
	if !ok {
		t.Logf("explore: no finding in %d exchanges", n)
		return
	}
	found := first.after
	// Shrink: the prefix up to the finding, then drop one exchange at a
	// time while a finding of the same rule remains.
	cur := steps[:first.after]
	deadline := time.Now().Add(ShrinkBudget)
	runs := 0
	for changed := true; changed && time.Now().Before(deadline); {
		changed = false
		for i := 0; i < len(cur) && time.Now().Before(deadline); i++ {
			cand := append(append([]step(nil), cur[:i]...), cur[i+1:]...)
			if len(cand) == 0 {
				continue
			}
			runs++
			if got, ok := runSteps(t, cfg, cand); ok && got.f.Rule == first.f.Rule {
				cur, first, changed = cand[:got.after], got, true
				i--
			}
		}
	}
	if len(cur) == 1 {
		// One exchange may still be more than needed: the finding may come
		// from the instance's making, with no exchange at all.
		if got, ok := runSteps(t, cfg, nil); ok && got.f.Rule == first.f.Rule {
			cur, first = nil, got
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "explore (seed %d, %d exchanges): a finding after %d exchanges, shrunk to %d (%d reruns); config %s", seed, n, found, len(cur), runs, cfgLabel(cfg))
	for i, s := range cur {
		fmt.Fprintf(&b, "\n    %d. %s", i+1, s)
	}
	fmt.Fprintf(&b, "\n  finding: %s", first.f.String())
	fmt.Fprintf(&b, "\n  rerun: conformance run --plugin BIN --explore %d --seed %d", n, seed)
	t.Errorf(first.f.Rule, "%s", b.String())
}

// runSteps drives steps on a fresh instance made with cfg, in a scratch
// case of its own (its own monitor, failures and trace), and returns the
// first finding and how many exchanges had run when it appeared.
func runSteps(t *T, cfg json.RawMessage, steps []step) (finding, bool) {
	s := &T{ctx: t.ctx, subject: t.subject, launcher: t.launcher, rec: trace.NewRecorder(), poison: t.poison, strict: t.strict, start: time.Now()}
	after := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		rg := newRigConfig(s, pipeline.Options{PoisonFrames: s.poison}, cfg, true)
		cks := chunkers()
		for i, st := range steps {
			sc := st.sc
			sc.pos, sc.of = i+1, len(steps)
			var ck *chunker
			if sc.sse() {
				ck = &cks[st.ck]
			}
			o := rg.run(sc, ck, st.reuse)
			checkExchange(rg, o)
			after = i + 1
			if s.Failed() {
				return
			}
		}
	}()
	<-done
	s.monitorEnd()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.failures {
		if f.Choice == "" || countsChoice(f.Choice, t.Describe().Alternatives, t.strict) {
			return finding{f: f, after: max(after, 1)}, true
		}
	}
	return finding{}, false
}

// checkExchange applies every per-exchange check of the plugin suite's
// cases to one outcome.
func checkExchange(rg *rig, o outcome) {
	t := rg.t
	rg.checkHooks("P15", o, "on_request")
	rg.checkHooks("P16", o, "on_response")
	rg.checkHooks("P19", o, "on_response_frame")
	for _, w := range o.res.Warnings {
		if w.Plugin != rg.name {
			continue
		}
		switch {
		case w.Rule == "P17":
			t.ErrorAt("P17", o.at, "%s", w.Msg)
		case w.Rule == "P33" && strings.Contains(w.Msg, "after the response head"):
			t.ErrorAt("P33", o.at, "%s", w.Msg)
		case w.Rule == "P34" && strings.Contains(w.Msg, "dropped"):
			t.ErrorAt("P34", o.at, "%s", w.Msg)
		}
	}
	for _, e := range o.events {
		if e.Hook == trace.HookOnRequest && e.Plugin == rg.name {
			for _, hc := range e.Headers {
				if hc.Refused != "" {
					t.ErrorAt("P32", o.at, "OnRequest changed the framing header %s: %s; the change is ignored", hc.Name, hc.Refused)
				}
			}
		}
	}
	checkIdentity(t, o)
}
