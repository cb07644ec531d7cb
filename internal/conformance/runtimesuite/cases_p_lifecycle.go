package runtimesuite

import (
	"strings"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// addPipelineLifecycleCases registers the cases of Init, Shutdown and Ready of the chain (P12-P14).
func addPipelineLifecycleCases(r *conformance.Registry) {
	for _, c := range []*conformance.Case{
		pcase("P12/init/order-and-stop", []string{"P12", "P13"}, "Init in order, the first error stops start-up; Stop shuts down the started plugins in reverse",
			"Four lifecycle probes, the third fails Init. Init must run on p0, p1, p2 in order and not on p3; start-up fails naming p2; Shutdown runs in reverse on the plugins before the failure.",
			p12InitOrderAndStop),
		pcase("P13/shutdown/reverse-errors-continue", []string{"P13"}, "Shutdown runs once each in reverse; an error is reported and the rest still shut down",
			"Three lifecycle probes start cleanly; the middle one fails Shutdown. All three shut down in reverse order and the stop error is reported.",
			p13ShutdownReverseErrorsContinue),
		pcase("P14/ready/all-and-concurrent", []string{"P14"}, "ready when every reporting plugin is ready; plugins without readiness count as ready",
			"A chain of a plain plugin and two readiness probes, one not ready, is asked Ready 8 times concurrently: every answer is not ready.",
			p14ReadyAllAndConcurrent),
	} {
		r.Add(c)
	}
}

func p12InitOrderAndStop(t *conformance.T) {
	pl := chain(4, "init", "shutdown", "ready")
	pl[2].script = on("init", -1, &abkitv1.ProbeReply{Error: "init broke"})
	calls, res := pipe{plugs: pl, start: true, stop: true}.run(t, "P12")
	t.Diff("P12", "init calls", []string{"p0.init", "p1.init", "p2.init"}, seq(calls, "init"))
	if !strings.Contains(res.GetStartError(), "p2") {
		t.Errorf("P12", "start error %q does not name p2", res.GetStartError())
	}
	t.Diff("P13", "shutdown calls", []string{"p1.shutdown", "p0.shutdown"}, seq(calls, "shutdown"))
}

func p13ShutdownReverseErrorsContinue(t *conformance.T) {
	pl := chain(3, "init", "shutdown", "ready")
	pl[1].script = on("shutdown", -1, &abkitv1.ProbeReply{Error: "shutdown broke"})
	calls, res := pipe{plugs: pl, start: true, stop: true, stopTO: int64(time.Second)}.run(t, "P13")
	t.Diff("P13", "shutdown calls", []string{"p2.shutdown", "p1.shutdown", "p0.shutdown"}, seq(calls, "shutdown"))
	if res.GetStopError() == "" {
		t.Errorf("P13", "the shutdown error was not reported")
	}
}

func p14ReadyAllAndConcurrent(t *conformance.T) {
	pl := append(chain(1), chain(2, "init", "shutdown", "ready")...)
	pl[1].name, pl[2].name = "r1", "r2"
	pl[2].script = on("ready", -1, &abkitv1.ProbeReply{Error: "warming up"})
	_, res := pipe{plugs: pl, ready: 8}.run(t, "P14")
	if len(res.GetReadyErrors()) != 8 {
		t.Fatalf("P14", "%d ready answers; want 8", len(res.GetReadyErrors()))
	}
	for _, e := range res.GetReadyErrors() {
		if e == "" {
			t.Errorf("P14", "the chain reported ready although r2 is not")
		}
	}
	_, res = pipe{plugs: chain(2), ready: 4}.run(t, "P14")
	for _, e := range res.GetReadyErrors() {
		if e != "" {
			t.Errorf("P14", "plugins without readiness must count as ready, got %q", e)
		}
	}
}
