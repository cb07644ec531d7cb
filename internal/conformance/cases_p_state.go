package conformance

import (
	"slices"

	"github.com/abkit/abkit/internal/pipeline"
)

// addPipelineStateCases checks what a host can see of a plugin's per-exchange
// state (P31): a value left over from an earlier exchange shows up in a
// later exchange's extensions or decision.
func addPipelineStateCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "P31/state/no-carry-over", Rules: []string{"P31"},
			Summary: "the extensions a plugin sets on an exchange do not depend on the exchanges before it",
			Explain: `Drives the standard exchanges through one chain in order, and through a
fresh chain in the reverse order. Each exchange must carry the same
extensions both times: they describe that exchange, and later plugins and
the host read them. A difference means state from an earlier exchange
leaked into a later one (a parser result kept in the plugin instead of in
the exchange's state, a flag not reset). Decisions are not compared: they
may depend on history by design (a rate limit counts across exchanges).
Fix: keep per-exchange values in gateway.SetState or in the extension of
the exchange that produced them, never in the plugin.`,
			Applies: pipelineReady,
			Run:     p31StateNoCarryOver,
		},
	} {
		r.Add(c)
	}
}

func p31StateNoCarryOver(t *T) {
	scs := numbered(exchangeAxis())
	drive := func(order []int) map[int]map[string]string {
		rg := newRig(t, pipeline.Options{})
		out := map[int]map[string]string{}
		for _, i := range order {
			out[i] = rg.run(scs[i], nil, false).extensions
		}
		return out
	}
	fwd := make([]int, len(scs))
	for i := range fwd {
		fwd[i] = i
	}
	back := slices.Clone(fwd)
	slices.Reverse(back)
	a, b := drive(fwd), drive(back)
	for i, sc := range scs {
		t.DiffAt("P31", sc.label(), "extensions after the others (-forward +reverse)", a[i], b[i])
	}
}
