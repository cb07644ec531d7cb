package runtimesuite

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// ext declares one probe extension.
type ext struct {
	id       string
	required bool
	priority int32
	slots    []string
	points   []string
	script   Script
}

func runIntercept(t *conformance.T, rule, point, payload string, repeat uint32, exts ...ext) ([]Call, *abkitv1.InterceptRun) {
	return runInterceptFor(t, rule, point, payload, "", repeat, exts...)
}

// runInterceptFor is runIntercept with the request's provider key set.
func runInterceptFor(t *conformance.T, rule, point, payload, provider string, repeat uint32, exts ...ext) ([]Call, *abkitv1.InterceptRun) {
	s := session(t)
	defer s.Close()
	sc := &abkitv1.InterceptScenario{BrokerId: s.Broker(), Point: point, PayloadJson: []byte(payload), Provider: provider, Repeat: repeat}
	for _, e := range exts {
		pts := e.points
		if pts == nil {
			pts = []string{point}
		}
		sc.Extensions = append(sc.Extensions, &abkitv1.ProbeSpec{Probe: s.Probe(e.id, e.script), Name: e.id,
			Manifest: &abkitv1.Manifest{PluginId: e.id, Required: e.required, Priority: e.priority, Slots: e.slots, Points: pts}})
	}
	res, err := s.RPC().RunIntercept(t.Context(), sc)
	if err != nil {
		t.Fatalf(rule, "the runtime failed to run the intercept scenario: %v", err)
	}
	calls := s.Calls()
	for _, c := range calls {
		t.Logf("#%d %s.%s %s %s", c.Seq, c.Probe, c.Hook, c.Point, c.Payload)
	}
	report(t, MonitorIntercept(sc, calls))
	return calls, res
}

func answer(d, reason, repl string) Script {
	return func(c *Call) *abkitv1.ProbeReply {
		if c.Hook != "intercept" {
			return nil
		}
		return &abkitv1.ProbeReply{Decision: d, Reason: reason, ReplacementJson: []byte(repl)}
	}
}

// sortNotify keeps decision calls in order and sorts the notify calls that
// follow (events are delivered asynchronously, in no fixed order across
// extensions).
func sortNotify(xs []string) []string {
	var calls, notes []string
	for _, x := range xs {
		if strings.HasSuffix(x, ".notify") {
			notes = append(notes, x)
		} else {
			calls = append(calls, x)
		}
	}
	sort.Strings(notes)
	return append(calls, notes...)
}

// deadlineRun dispatches payload at point through one recording extension
// with the given manifest timeout and returns its decision calls. The RPC
// gets a 90 s deadline of its own (still cancelled with the case), so a
// runtime bounding calls by its caller's deadline shows the real budget.
func deadlineRun(t *conformance.T, point, payload string, manifest time.Duration) []Call {
	s := session(t)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 90*time.Second)
	defer cancel()
	stop := context.AfterFunc(t.Context(), cancel)
	defer stop()
	sc := &abkitv1.InterceptScenario{BrokerId: s.Broker(), Point: point, PayloadJson: []byte(payload),
		Extensions: []*abkitv1.ProbeSpec{{Probe: s.Probe("x", nil), Name: "x",
			Manifest: &abkitv1.Manifest{PluginId: "x", Points: []string{point}, TimeoutNs: int64(manifest)}}}}
	res, err := s.RPC().RunIntercept(ctx, sc)
	if err != nil {
		t.Fatalf("D3", "the runtime failed to run the intercept scenario: %v", err)
	}
	if res.GetBuildError() != "" {
		t.Fatalf("D3", "build error %q", res.GetBuildError())
	}
	var out []Call
	report(t, MonitorIntercept(sc, s.Calls()))
	for _, c := range s.Calls() {
		if c.Hook == "intercept" {
			out = append(out, c)
		}
	}
	return out
}

// runInterceptTO is runIntercept with a manifest timeout on the first
// extension.
func runInterceptTO(t *conformance.T, point, payload string, timeout int64, exts ...ext) ([]Call, *abkitv1.InterceptRun) {
	s := session(t)
	defer s.Close()
	sc := &abkitv1.InterceptScenario{BrokerId: s.Broker(), Point: point, PayloadJson: []byte(payload)}
	for i, e := range exts {
		m := &abkitv1.Manifest{PluginId: e.id, Required: e.required, Priority: e.priority, Slots: e.slots, Points: []string{point}}
		if i == 0 {
			m.TimeoutNs = timeout
		}
		sc.Extensions = append(sc.Extensions, &abkitv1.ProbeSpec{Probe: s.Probe(e.id, e.script), Name: e.id, Manifest: m})
	}
	res, err := s.RPC().RunIntercept(t.Context(), sc)
	if err != nil {
		t.Fatalf("D13", "the runtime failed to run the intercept scenario: %v", err)
	}
	report(t, MonitorIntercept(sc, s.Calls()))
	return s.Calls(), res
}

func runHooks(t *conformance.T, rule, kind, policy, input string, hs ...*abkitv1.HookSpec) func(scripts ...Script) ([]Call, *abkitv1.HookRun) {
	return func(scripts ...Script) ([]Call, *abkitv1.HookRun) {
		s := session(t)
		defer s.Close()
		sc := &abkitv1.HookScenario{BrokerId: s.Broker(), Kind: kind, ToolPolicy: policy, InputJson: []byte(input)}
		for i, h := range hs {
			var sc2 Script
			if i < len(scripts) {
				sc2 = scripts[i]
			}
			sc.Hooks = append(sc.Hooks, &abkitv1.ProbeSpec{Probe: s.Probe(h.GetId(), sc2), Name: h.GetId(), Hook: h})
		}
		res, err := s.RPC().RunHooks(t.Context(), sc)
		if err != nil {
			t.Fatalf(rule, "the runtime failed to run the hook scenario: %v", err)
		}
		report(t, MonitorHooks(sc, s.Calls()))
		return s.Calls(), res
	}
}

func hspec(id string, order int64, policy, kind string) *abkitv1.HookSpec {
	return &abkitv1.HookSpec{Id: id, Order: order, Policy: policy, Kind: kind}
}

// fail answers every intercept, submit, part or tool call with an error
// (notify calls succeed).
func fail(msg string) Script {
	return func(c *Call) *abkitv1.ProbeReply {
		if c.Hook == "notify" {
			return nil
		}
		return &abkitv1.ProbeReply{Error: msg}
	}
}

// walkWarnings counts the warnings about calls (not event delivery).
func walkWarnings(run *abkitv1.InterceptRun) int {
	n := 0
	for _, w := range run.GetWarnings() {
		if !strings.HasPrefix(w.GetKind(), "event") {
			n++
		}
	}
	return n
}

func value(v string) Script {
	return func(*Call) *abkitv1.ProbeReply { return &abkitv1.ProbeReply{ValueJson: []byte(v)} }
}

// sameJSON compares two JSON objects, treating absent fields and zero
// values alike: a runtime may re-encode a replacement canonically, with its
// zero fields written out (D8: omitted fields become zero).
func sameJSON(a, b string) bool {
	norm := func(s string) map[string]any {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return nil
		}
		for k, v := range m {
			if v == nil || v == false || v == "" || v == 0.0 || reflect.DeepEqual(v, []any{}) || reflect.DeepEqual(v, map[string]any{}) {
				delete(m, k)
			}
		}
		return m
	}
	na, nb := norm(a), norm(b)
	return na != nil && reflect.DeepEqual(na, nb)
}
