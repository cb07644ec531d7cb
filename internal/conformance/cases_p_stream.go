package conformance

import (
	"fmt"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/sdk/gateway"
)

// streamCase is one case of a stream of a given shape, made into a Case
// by its case method.
type streamCase struct {
	id, rule, summary, explain string
	rules                      []string
	scenario                   func() scenario
}

// addPipelineStreamCases registers the cases of streamed responses: streams
// of unusual shapes, chunking and borrowed frame bytes (P19-P22, P24).
func addPipelineStreamCases(r *Registry) {
	for _, sc := range streamShapes() {
		r.Add(sc.asCase())
	}
	for _, c := range []*Case{
		{
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
		},
		{
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
		},
	} {
		r.Add(c)
	}
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

// streamShapes are the streams of unusual shapes a streaming plugin must
// answer legally: no frame, one, many, a JSON body, an early end.
func streamShapes() []streamCase {
	return []streamCase{
		{id: "P21/last-exactly-once/zero-frames", rule: "P21", summary: "handles a stream of zero frames and its single last call",
			explain: `Streams an event-stream response that holds only a comment block, so
the plugin gets no frame, just the one closing call with last=true and
an empty frame. A failure means the plugin assumed at least one frame
(an index out of range, a nil dereference on the closing call).`,
			scenario: zeroFramesScenario},
		{id: "P19/frames/one-frame", rule: "P19", summary: "handles a stream of exactly one frame",
			explain: `Streams an event-stream response of one event, then the closing call.
A failure means the plugin mishandles the smallest non-empty stream.`,
			scenario: oneFrameScenario},
		{id: "P20/frames/many-frames", rule: "P20", rules: []string{"P19", "P20"}, summary: "handles a stream of 200 frames in order",
			explain: `Streams 200 events. Each frame must be answered within 1 s and the
plugin must not fail part-way (buffers that overflow, per-frame
allocations that are never released, a crash under load).`,
			scenario: manyFramesScenario},
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
			scenario: earlyEndScenario},
	}
}

func zeroFramesScenario() scenario {
	s := streamScenarios()[0]
	s.name, s.events = "zero-frames", []string{": keep-alive\n\n"}
	return s
}

func oneFrameScenario() scenario {
	s := streamScenarios()[0]
	s.name, s.events = "one-frame", chatEvents("Hello")
	return s
}

func manyFramesScenario() scenario {
	s := streamScenarios()[0]
	s.name, s.events = "many-frames", append(chatEvents(manyDeltas(200)...), "data: [DONE]\n\n")
	return s
}

func earlyEndScenario() scenario {
	s := streamScenarios()[0]
	s.name, s.events, s.early = "early-end", chatEvents("Hel", "lo", " wor"), true
	return s
}

// asCase is the Case of a stream shape.
func (sc streamCase) asCase() *Case {
	rules := sc.rules
	if rules == nil {
		rules = []string{sc.rule}
	}
	return &Case{
		ID: sc.id, Rules: rules, Summary: sc.summary,
		Explain: sc.explain + `
Every frame call must answer continue or a 4xx/5xx reject, within 1 s,
without a panic. Fix: treat every frame as untrusted input and the
closing call (last=true, empty frame) as the place to finish parsing.`,
		Applies: all(pipelineReady, behaviour(gateway.BehaviourStream)),
		Run:     sc.run,
	}
}

// run drives the shape's stream in every framing (a JSON body, or 200
// frames, once) and checks every frame call.
func (sc streamCase) run(t *T) {
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
