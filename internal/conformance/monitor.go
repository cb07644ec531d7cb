package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/google/go-cmp/cmp"
)

// The monitor runs inside every case that makes instances of a family P
// plugin: Describe is what the plugin says about itself, and the suite does
// not take it on trust. Every instance the case makes (for every config
// tried) must report what Describe reported, and still report it when the
// case ends; a plugin Describe could probe must have recorded its two
// probe instances; a plugin that lists stream must be sent frames. A
// finding fails the case it happened in and cites P2.

// monitor records the instances one case made.
type monitor struct {
	mu   sync.Mutex
	f    *gateway.Factory
	made []made
	// capsOff and behavOff count the instances that disagreed with
	// Describe; the first of each is reported, the rest are counted.
	capsOff, behavOff int
}

// made is one instance as NewInstance answered.
type made struct {
	at         string
	inst       gateway.Plugin
	caps       gateway.Capabilities
	behaviours []string
}

// Factory is the subject's pipeline factory with the monitor around it:
// cases make instances through it (newRig does), never through the
// subject's factory directly. Nil when the subject serves no pipeline.
func (t *T) Factory() *gateway.Factory {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mon != nil {
		return t.mon.f
	}
	inner := t.subject.Plugin().Pipeline
	if inner == nil {
		return nil
	}
	m := &monitor{}
	f := *inner
	f.New = func(cfg json.RawMessage) (gateway.Plugin, error) {
		p, err := inner.New(cfg)
		if err != nil || p == nil {
			return p, err
		}
		m.made1(t, p, cfg)
		return p, nil
	}
	m.f = &f
	t.mon = m
	return m.f
}

// made1 checks one new instance against Describe (P2, P3).
func (m *monitor) made1(t *T, p gateway.Plugin, cfg json.RawMessage) {
	m.mu.Lock()
	mi := made{inst: p, caps: p.Capabilities(), behaviours: gateway.Behaviours(p)}
	mi.at = fmt.Sprintf("instance %d (config %s)", len(m.made)+1, cfgLabel(cfg))
	m.made = append(m.made, mi)
	m.mu.Unlock()
	pi := t.Describe().Pipeline
	if pi == nil || pi.ProbeError != "" {
		return // nothing to compare with; P6 and the probe cases say why
	}
	capsOff := !mi.caps.Normalize().Equal(pi.Capabilities.Normalize())
	behavOff := !slices.Equal(mi.behaviours, pi.Behaviours)
	m.mu.Lock()
	firstCaps, firstBehav := capsOff && m.capsOff == 0, behavOff && m.behavOff == 0
	if capsOff {
		m.capsOff++
	}
	if behavOff {
		m.behavOff++
	}
	m.mu.Unlock()
	if firstCaps {
		t.ErrorAt("P2", mi.at, "NewInstance reports capabilities other than Describe's; capabilities are type-level metadata, the same for every instance and config (-describe +instance)\n%s",
			cmp.Diff(pi.Capabilities, mi.caps))
	}
	if firstBehav {
		t.ErrorAt("P2", mi.at, "NewInstance reports behaviours %v, Describe %v; an instance has exactly the optional behaviours Describe lists (a plugin that lists stream must take frames)",
			orNone(mi.behaviours), orNone(pi.Behaviours))
	}
}

// end checks, when the case is over, that every instance still reports
// what it reported when made, and that Describe recorded its probe
// instances. It runs only for cases that made instances.
func (m *monitor) end(t *T) {
	m.mu.Lock()
	made := slices.Clone(m.made)
	capsOff, behavOff := m.capsOff, m.behavOff
	m.mu.Unlock()
	if len(made) == 0 {
		return
	}
	if capsOff > 1 || behavOff > 1 {
		t.Logf("monitor: %d of %d instances disagreed with Describe's capabilities, %d with its behaviours (the first of each is reported)", capsOff, len(made), behavOff)
	}
	for _, mi := range made {
		if c := mi.inst.Capabilities(); !c.Equal(mi.caps) {
			t.ErrorAt("P2", mi.at, "the instance's capabilities changed after traffic (-when made +at the end)\n%s", cmp.Diff(mi.caps, c))
		}
		if b := gateway.Behaviours(mi.inst); !slices.Equal(b, mi.behaviours) {
			t.ErrorAt("P2", mi.at, "the instance's behaviours changed after traffic: %v when made, %v at the end", orNone(mi.behaviours), orNone(b))
		}
	}
	if pi := t.Describe().Pipeline; pi != nil && pi.ProbeError == "" && len(pi.Observed) != 2 {
		t.Errorf("P2", "Describe probed the plugin but its observed list holds %d instances, want the 2 probe instances it made (name and capabilities of each), so that the host can compare them", len(pi.Observed))
	}
}

// checkStreamed is the monitor's check of one streamed exchange: a plugin
// whose Describe lists stream must be sent the frames (P2: the instance
// has the behaviours Describe lists). An exchange the plugin or the chain
// ended before the response, or at its head, proves nothing.
func (r *rig) checkStreamed(sc scenario, o outcome) {
	t := r.t
	if !sc.sse() || o.upstream == nil || !t.Describe().HasBehaviour(gateway.BehaviourStream) || o.res.Outcome.Kind != gateway.OutcomeAllow {
		return
	}
	for _, e := range o.events {
		if e.Plugin == r.name && e.Hook == trace.HookOnResponseFrame {
			return
		}
	}
	t.ErrorAt("P2", o.at, "Describe lists the stream behaviour, but no frame reached the plugin: its instance does not take frames (OnResponseFrame)")
}

func cfgLabel(cfg json.RawMessage) string {
	if len(cfg) == 0 {
		return "none"
	}
	if len(cfg) > 60 {
		return string(cfg[:57]) + "..."
	}
	return string(cfg)
}

func orNone(s []string) any {
	if len(s) == 0 {
		return "none"
	}
	return s
}

// monitorEnd runs the monitor's end checks of the case, if it made
// instances. A check that panics (an in-process plugin's Capabilities) is
// a finding, not a crash of the suite.
func (t *T) monitorEnd() {
	t.mu.Lock()
	m := t.mon
	t.mu.Unlock()
	if m == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("P2", "reading an instance's capabilities at the end of the case panicked: %v", p)
		}
	}()
	m.end(t)
}
