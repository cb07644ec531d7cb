package runtimesuite

import (
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addLifecycleChoiceCases checks the lifecycle choices P12.start-failure
// and P14.ready, each alternative by its own case: what every alternative
// shares (Init order, the failed start named, not ready while one plugin
// is not) is P12/init/order-and-stop and P14/ready/all-and-concurrent.
func addLifecycleChoiceCases(r *conformance.Registry) {
	startFailed := func(t *conformance.T, stop bool) []string {
		pl := chain(3, "init", "shutdown", "ready")
		pl[2].script = on("init", -1, &abkitv1.ProbeReply{Error: "init broke"})
		calls, res := pipe{plugs: pl, start: true, stop: stop}.run(t, "P12")
		if !strings.Contains(res.GetStartError(), "p2") {
			t.Errorf("P12", "start error %q does not name p2", res.GetStartError())
		}
		return seq(calls, "shutdown")
	}
	r.Add(choice("P12.start-failure", pcase("P12/start-failure/left-to-stop", []string{"P12", "P13"},
		"after a failed Start the started plugins stay started until Stop",
		"Three lifecycle probes, the third fails Init. Without a Stop no plugin is shut down; with one, Stop shuts down p1 and p0 in reverse.",
		func(t *conformance.T) {
			t.Diff("P12", "shutdown calls after a failed Start, no Stop", []string(nil), startFailed(t, false))
			t.Diff("P13", "shutdown calls after a failed Start and a Stop", []string{"p1.shutdown", "p0.shutdown"}, startFailed(t, true))
		})))
	r.Add(choice("P12.start-failure", pcase("P12/start-failure/stop-started", []string{"P12", "P13"},
		"a failed Start shuts the started plugins down in reverse itself; Stop does not repeat it",
		"Three lifecycle probes, the third fails Init. Start must shut down p1 and p0 in reverse before it returns, and a Stop after it shuts nothing down again.",
		func(t *conformance.T) {
			t.Diff("P12", "shutdown calls after a failed Start, no Stop", []string{"p1.shutdown", "p0.shutdown"}, startFailed(t, false))
			t.Diff("P13", "shutdown calls after a failed Start and a Stop", []string{"p1.shutdown", "p0.shutdown"}, startFailed(t, true))
		}), "stop-started"))
	notReady := func(t *conformance.T) []string {
		pl := chain(3, "init", "shutdown", "ready")
		pl[0].name, pl[1].name, pl[2].name = "r0", "r1", "r2"
		pl[0].script = on("ready", -1, &abkitv1.ProbeReply{Error: "warming up"})
		pl[2].script = on("ready", -1, &abkitv1.ProbeReply{Error: "cold"})
		_, res := pipe{plugs: pl, ready: 4}.run(t, "P14")
		if len(res.GetReadyErrors()) != 4 {
			t.Fatalf("P14", "%d ready answers; want 4", len(res.GetReadyErrors()))
		}
		return res.GetReadyErrors()
	}
	r.Add(choice("P14.ready", pcase("P14/ready/names-every-plugin", []string{"P14"},
		"a not-ready answer names every plugin that is not ready",
		"Of three readiness probes r0 and r2 are not ready; 4 concurrent Ready calls must each name both, and not r1.",
		func(t *conformance.T) {
			for _, e := range notReady(t) {
				if !strings.Contains(e, "r0") || !strings.Contains(e, "r2") || strings.Contains(e, "r1") {
					t.Errorf("P14", "ready error %q; want r0 and r2 named, not r1", e)
				}
			}
		})))
	r.Add(choice("P14.ready", pcase("P14/ready/names-first", []string{"P14"},
		"a not-ready answer names the first plugin that is not ready",
		"Of three readiness probes r0 and r2 are not ready; 4 concurrent Ready calls must each name r0.",
		func(t *conformance.T) {
			for _, e := range notReady(t) {
				if !strings.Contains(e, "r0") || strings.Contains(e, "r1") {
					t.Errorf("P14", "ready error %q; want r0 named", e)
				}
			}
		}), "first"))
}
