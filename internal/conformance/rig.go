package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/chunks"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
	"github.com/abkit/abkit/sdk/sse"
)

// HookBudget is how long one pipeline hook call may take before the suite
// calls it slow. The contracts set no number for family P; a gateway hook
// runs on the request path, so the suite expects an answer well within a
// second.
const HookBudget = time.Second

// ConformanceHost and ConformanceClient are the host (authority) and the
// client address the plugin suite's exchanges have (P35): scenario URLs
// are paths, and a plugin keyed by host must still see one.
const (
	ConformanceHost   = "gateway.conformance.test"
	ConformanceClient = "192.0.2.10:40000"
)

// hookAllowance is the time a hook call may take on this machine at this
// moment: HookBudget plus 20 Echo round trips to the plugin's process
// (their median of 5, taken when a call ran over HookBudget). A busy
// machine slows the round trip as it slows the hook, so it widens the
// allowance; a plugin that is slow on its own is slow only in the hook.
// An in-process subject has no round trip; its stand-in is how late a
// goroutine wakes from a 1 ms sleep, which grows the same way when the
// machine is busy (a plugin under go test -race on a loaded machine).
func hookAllowance(t *T) (allow, echo time.Duration) {
	e, ok := t.Subject().(echoer)
	var took []time.Duration
	for range 5 {
		start := time.Now()
		if ok {
			_ = e.Echo(t.Context())
			took = append(took, time.Since(start))
		} else {
			took = append(took, wakeDelay(start))
		}
	}
	echo = median(took)
	return time.Duration(float64(HookBudget)*busyFactor()) + 20*echo, echo
}

// busyFactor is how many times more runnable work the machine has than
// CPUs (the 1-minute load average over GOMAXPROCS, at least 1; 1 where
// /proc/loadavg cannot be read). A round trip measured now can be quick
// between two stalls of a loaded machine, and a hook of a sound plugin on
// a 2-CPU machine at load 20 took over a second (P20 cases of guardrail):
// the budget grows with the load, so the suite fails a slow plugin, not a
// busy machine.
func busyFactor() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 1
	}
	f, _, _ := strings.Cut(string(data), " ")
	load, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return 1
	}
	return max(1, load/float64(runtime.GOMAXPROCS(0)))
}

// wakeDelay sleeps 1 ms in another goroutine and returns how much later
// than that it was back, measured from start.
func wakeDelay(start time.Time) time.Duration {
	const nap = time.Millisecond
	done := make(chan struct{})
	go func() { time.Sleep(nap); close(done) }()
	<-done
	return max(time.Since(start)-nap, 0)
}

// otherFinishTimeout is the finish deadline of the cases that do not check
// OnFinish.
const otherFinishTimeout = 250 * time.Millisecond

// ReadyBudget is how long a readiness check may take (P14: cheap).
const ReadyBudget = 100 * time.Millisecond

// scenario is one exchange the suite drives: a request and the upstream's
// answer. For an event stream, events are the SSE blocks of the body.
type scenario struct {
	name        string
	method, url string
	reqType     string
	reqBody     string
	status      int
	respType    string
	respBody    string   // non-streamed body
	events      []string // SSE blocks, each ending in a blank line
	early       bool     // the stream ends with an error after the events
	// reqHeader are request headers beyond Content-Type and X-Client-Id.
	reqHeader http.Header
	// pos and of number the exchange among those a case drives (see
	// numbered); 0 when it drives one.
	pos, of int
}

func (s scenario) sse() bool { return s.events != nil }

// numbered numbers scs 1…n of n, so that a finding names its exchange.
func numbered(scs []scenario) []scenario {
	out := slices.Clone(scs)
	for i := range out {
		out[i].pos, out[i].of = i+1, len(out)
	}
	return out
}

// label names the exchange in findings: "exchange 3 of 6 (chat, streamed,
// 5 frames)". Frames are counted as the host cuts them (sdk/sse).
func (s scenario) label() string {
	kind := "not streamed"
	if s.sse() {
		frames := 0
		var f sse.Framer
		count := func(_ []byte, isFrame bool) error {
			if isFrame {
				frames++
			}
			return nil
		}
		_ = f.Feed(s.body(), count)
		_, _ = f.End(count)
		kind = "streamed, " + plural(frames, "frame")
		if s.early {
			kind += ", then the upstream fails"
		}
	}
	if s.of > 0 {
		return fmt.Sprintf("exchange %d of %d (%s, %s)", s.pos, s.of, s.name, kind)
	}
	return fmt.Sprintf("exchange %s (%s)", s.name, kind)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (s scenario) body() []byte {
	if !s.sse() {
		return []byte(s.respBody)
	}
	return []byte(strings.Join(s.events, ""))
}

func chatEvents(deltas ...string) []string {
	var ev []string
	for i, d := range deltas {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": d}}}})
		if i == 0 {
			b, _ = json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": d}}}})
		}
		ev = append(ev, "data: "+string(b)+"\n\n")
	}
	return ev
}

const chatReq = `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"Say hello to the conformance suite."}]}`

const mcpReq = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"abkit"}}}`

const a2aReq = `{"jsonrpc":"2.0","id":"t1","method":"message/stream","params":{"message":{"role":"user","parts":[{"kind":"text","text":"hi"}],"messageId":"m1"}}}`

func manyDeltas(n int) []string {
	d := make([]string, n)
	for i := range d {
		d[i] = fmt.Sprintf("word%d ", i)
	}
	return d
}

// streamScenarios are the event streams the streaming cases feed, in the
// protocols the example parsers understand, plus a plain one.
func streamScenarios() []scenario {
	return []scenario{
		{name: "chat", method: "POST", url: "/v1/chat/completions", reqType: "application/json", reqBody: chatReq,
			status: 200, respType: "text/event-stream", events: append(chatEvents("Hel", "lo, ", "suite", "!"), "data: [DONE]\n\n")},
		{name: "mcp", method: "POST", url: "/mcp", reqType: "application/json", reqBody: mcpReq,
			status: 200, respType: "text/event-stream", events: []string{
				"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\r\n\r\n",
				"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"found 3\"}]}}\r\n\r\n",
			}},
		{name: "a2a", method: "POST", url: "/", reqType: "application/json", reqBody: a2aReq,
			status: 200, respType: "text/event-stream", events: []string{
				"data: {\"jsonrpc\":\"2.0\",\"id\":\"t1\",\"result\":{\"kind\":\"status-update\",\"taskId\":\"task-1\",\"contextId\":\"c1\",\"status\":{\"state\":\"working\"},\"final\":false}}\n\n",
				"data: {\"jsonrpc\":\"2.0\",\"id\":\"t1\",\"result\":{\"kind\":\"artifact-update\",\"taskId\":\"task-1\",\"contextId\":\"c1\",\"artifact\":{\"artifactId\":\"a1\",\"parts\":[{\"kind\":\"text\",\"text\":\"done\"}]}}}\n\n",
				"data: {\"jsonrpc\":\"2.0\",\"id\":\"t1\",\"result\":{\"kind\":\"status-update\",\"taskId\":\"task-1\",\"contextId\":\"c1\",\"status\":{\"state\":\"completed\"},\"final\":true}}\n\n",
			}},
		// The other shapes real servers send: CR line ends, a charset
		// parameter, comment lines and blocks, id and retry fields, data
		// split over several lines, a field without its space, and a last
		// event the server never terminated.
		{name: "cr-charset-comments", method: "POST", url: "/v1/chat/completions", reqType: "application/json", reqBody: chatReq,
			status: 200, respType: "text/event-stream; charset=utf-8", events: []string{
				": keep-alive\r\r",
				"retry: 3000\rid: 1\rdata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\r\r",
				": ping\rdata:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"}}]}\r\r",
				"data: [DONE]\r\r",
			}},
		{name: "multiline-unterminated", method: "POST", url: "/mcp", reqType: "application/json", reqBody: mcpReq,
			status: 200, respType: "text/event-stream", events: []string{
				"event: message\nid: 41\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n",
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"found 3\"}]}}\n",
			}},
	}
}

// jsonScenarios are non-streamed exchanges.
func jsonScenarios() []scenario {
	return []scenario{
		{name: "chat-json", method: "POST", url: "/v1/chat/completions", reqType: "application/json",
			reqBody: `{"model":"gpt-4o","messages":[{"role":"user","content":"hello"}]}`, status: 200, respType: "application/json",
			respBody: `{"id":"chatcmpl-2","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! Mail me at a@example.com."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`},
		{name: "mcp-json", method: "POST", url: "/mcp", reqType: "application/json", reqBody: mcpReq,
			status: 200, respType: "application/json", respBody: `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"found 3"}]}}`},
		{name: "get-text", method: "GET", url: "/healthz", status: 200, respType: "text/plain", respBody: "ok\n"},
	}
}

// rig is the reference pipeline runtime around the plugin under test: a
// one-entry inbound chain in proxy mode.
type rig struct {
	t     *T
	chain *pipeline.Chain
	name  string
}

// newRig builds the chain, or ends the case. Build errors are reported
// under the rule they cite.
func newRig(t *T, opts pipeline.Options) *rig { return newRigConfig(t, opts, nil, false) }

// newRigConfig is newRig with the plugin's config: cfg when given (set),
// else the first one that makes an instance (WorkingConfig).
func newRigConfig(t *T, opts pipeline.Options, cfg json.RawMessage, set bool) *rig {
	if opts.FinishTimeout == 0 {
		// Cases that do not check OnFinish do not wait long for it: a slow
		// finisher is the finish cases' business.
		opts.FinishTimeout = otherFinishTimeout
	}
	f := t.Factory()
	if f == nil {
		t.Fatalf("P3", "the subject serves no pipeline factory although its descriptor lists family P")
	}
	if !set {
		var err error
		if cfg, err = WorkingConfig(f); err != nil {
			t.Fatalf("P6", "no instance could be made: %v", err)
		}
	}
	// Dependencies are satisfied by inert stand-ins: the plugin must cope
	// with a chain in which the extensions it hopes for are absent.
	spec := pipeline.Spec{Direction: gateway.Inbound}
	factories := []gateway.Factory{*f}
	caps := t.Describe().Pipeline.Capabilities
	deps := append([]string(nil), caps.Requires...)
	if len(caps.RequiresAny) > 0 {
		deps = append(deps, caps.RequiresAny[0])
	}
	for _, dep := range deps {
		if dep == "" || dep == f.Name || slices.Contains(specNames(spec), dep) {
			continue
		}
		spec.Entries = append(spec.Entries, pipeline.Entry{Plugin: dep})
		factories = append(factories, standIn(dep))
	}
	spec.Entries = append(spec.Entries, pipeline.Entry{Plugin: f.Name, Config: cfg})
	ch, err := pipeline.Build(spec, factories, opts)
	if err != nil {
		var be *pipeline.BuildError
		if errors.As(err, &be) && len(be.Errs) > 0 {
			for _, re := range be.Errs[1:] {
				t.Errorf(re.Rule, "%s", re.Error())
			}
			t.Fatalf(be.Errs[0].Rule, "%s", be.Errs[0].Error())
		}
		t.Fatalf("P6", "the reference pipeline could not build a chain of the plugin: %v", err)
	}
	return &rig{t: t, chain: ch, name: f.Name}
}

// standIn is an inert plugin registered under a dependency's name.
func standIn(name string) gateway.Factory {
	return gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) { return standInPlugin(name), nil }}
}

type standInPlugin string

func (s standInPlugin) Name() string { return string(s) }
func (s standInPlugin) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Conformance stand-in for a dependency"}
}
func (standInPlugin) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (standInPlugin) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// chunker cuts a body into upstream chunks.
type chunker struct {
	name string
	cut  func([]byte) [][]byte
}

func chunkers() []chunker {
	every := func(n int) func([]byte) [][]byte {
		return func(b []byte) [][]byte { return plugintest.Split(b, n) }
	}
	return []chunker{
		{"whole", func(b []byte) [][]byte { return [][]byte{b} }},
		{"per-byte", every(1)},
		{"7-bytes", every(7)},
		{"per-line", func(b []byte) [][]byte {
			var out [][]byte
			for len(b) > 0 {
				i := strings.IndexAny(string(b), "\r\n")
				if i < 0 {
					i = len(b) - 1
				}
				out = append(out, b[:i+1])
				b = b[i+1:]
			}
			return out
		}},
	}
}

// stream is an upstream body in chunks, each handed as a fresh copy, or,
// with reuse, in one buffer that the next call overwrites, as a network
// read buffer is, so a plugin that keeps frame bytes past its call sees
// other bytes (P24). early ends it with a connection reset.
func stream(cut [][]byte, reuse, early bool) *chunks.Stream {
	s := chunks.New(cut)
	s.Copy, s.Reuse = true, reuse
	if early {
		s.End = errors.New("upstream connection reset (conformance: early end)")
	}
	return s
}

// outcome is what one driven exchange came to.
type outcome struct {
	// at names the exchange (scenario.label, and the chunking).
	at         string
	res        *pipeline.Result
	extensions map[string]string // key → JSON
	events     []trace.Event
	// sent is the request header the exchange started with, upstream the
	// one that went upstream (nil when denied), identity the exchange's
	// identity at its end (P32, P36).
	sent, upstream http.Header
	identity       *gateway.Identity
}

// run drives one exchange of sc. ck and reuse shape the upstream stream.
func (r *rig) run(sc scenario, ck *chunker, reuse bool) outcome {
	t := r.t
	h := http.Header{}
	if sc.reqType != "" {
		h.Set("Content-Type", sc.reqType)
	}
	h.Set("X-Client-Id", "conformance")
	for k, v := range sc.reqHeader {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	var body []byte
	if sc.reqBody != "" {
		body = []byte(sc.reqBody)
	}
	rec := trace.NewRecorder()
	req := pipeline.RequestTo(sc.method, sc.url, h, body)
	// A real host (P35): a plugin keyed by host sees one, as behind a
	// gateway; the scenario URLs are paths.
	req.Scheme, req.Host, req.RemoteAddr = "https", ConformanceHost, ConformanceClient
	sent := h.Clone()
	ex := r.chain.NewExchange(req, pipeline.ExchangeOptions{Trace: rec})
	rh := http.Header{}
	rh.Set("Content-Type", sc.respType)
	up := pipeline.Upstream{Status: sc.status, Header: rh}
	if sc.sse() || sc.early {
		b := sc.body()
		cut := [][]byte{b}
		if ck != nil {
			cut = ck.cut(b)
		}
		up.Stream = stream(cut, reuse, sc.early)
	} else {
		up.Body = sc.body()
	}
	ctx := t.Context()
	t.Logf("exchange %s: %s %s", sc.name, sc.method, sc.url)
	var upstream http.Header
	if ex.Request(ctx) {
		upstream = ex.Gateway().Request.Header.Clone()
		ex.Respond(ctx, up)
	}
	res := ex.Finish()
	out := outcome{at: sc.label(), res: res, events: rec.Events(), extensions: map[string]string{}, sent: sent, upstream: upstream}
	if id, ok := ex.Gateway().Identity(); ok {
		out.identity = &id
	}
	if ck != nil && ck.name != "whole" {
		out.at += ", chunked " + ck.name
	}
	for k, v := range ex.Gateway().Extensions() {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprintf("<not JSON: %v>", err))
		}
		out.extensions[k] = string(b)
	}
	for _, e := range out.events {
		t.rec.Add(e)
		t.Logf("  %s %s frame=%v last=%v -> %s %s %s (%.3fms)", e.Hook, e.Plugin, fmtFrame(e.Frame), e.Last, e.Action, e.Reason, e.Error, float64(e.DurationNS)/1e6)
		// What the call left in the extensions (recorded redacted), so an
		// author sees what a parser extracted at the step it did.
		for _, x := range e.Extensions {
			switch {
			case x.Refused != "":
				t.Logf("    ext %s refused: %s", x.Key, x.Refused)
			case x.Removed:
				t.Logf("    ext %s removed", x.Key)
			default:
				t.Logf("    ext %s = %s", x.Key, x.Value)
			}
		}
	}
	t.Logf("  outcome %s status %d by %q: %s", res.Outcome.Kind, res.Outcome.Status, res.Outcome.DeniedBy, res.Outcome.Reason)
	r.checkStreamed(sc, out)
	return out
}

func specNames(s pipeline.Spec) []string {
	var out []string
	for _, e := range s.Entries {
		out = append(out, e.Plugin)
	}
	return out
}

func fmtFrame(f *int) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprint(*f)
}

// checkHooks fails rule for every call of one of the given hooks that
// errored (a panic or a dead process), answered a reject with an illegal
// status, or took longer than HookBudget.
func (r *rig) checkHooks(rule string, o outcome, hooks ...string) {
	t := r.t
	for _, e := range o.events {
		if e.Plugin != r.name || !slices.Contains(hooks, e.Hook) {
			continue
		}
		where := o.at + ", " + callName(e)
		switch {
		case strings.Contains(e.Error, "deadline had passed as the call began"):
			// The case's time was up before this call: the overrun
			// that used it up is the finding, not this call.
			t.Logf("%s: %s", where, e.Error)
		case e.Error != "":
			t.ErrorAt(rule, where, "%s", callProblem(e.Error))
		}
		if d := time.Duration(e.DurationNS); d > HookBudget {
			if allow, echo := hookAllowance(t); d > allow {
				t.ErrorAt(rule, where, "took %v; answer within %v (%v, scaled by the load average over the CPUs, plus 20 round trips of %v measured now: to the plugin process, or a goroutine wake-up in process)",
					d.Round(time.Millisecond), allow.Round(time.Millisecond), HookBudget, echo.Round(time.Millisecond))
			} else {
				t.Logf("%s took %v, over %v, but the machine is slow: a protocol round trip takes %v now, so the allowance is %v",
					where, d.Round(time.Millisecond), HookBudget, echo.Round(time.Millisecond), allow.Round(time.Millisecond))
			}
		}
	}
	// A status outside 400–599 is a fault only where the plugin takes
	// abkit's alternative of P15.reject-status (remapped to 403): under
	// as-given the host sends it as the plugin meant it.
	for _, w := range o.res.Warnings {
		if w.Plugin == r.name && strings.Contains(w.Msg, "outside 400–599") && hookIn(w.Msg, hooks) && t.Alternative("P15.reject-status") == "remap-403" {
			t.ChoiceErrorAt("P15.reject-status", rule, o.at, "%s; reject with a 4xx or 5xx status", w.Msg)
		}
		if w.Plugin == r.name && w.Rule == "X1" && strings.Contains(w.Msg, " refused, ") {
			// The plugin stored a value its own declared schema refuses.
			t.ErrorAt(rule, o.at, "%s (X1); make the value match the schema in Capabilities().Extensions, or fix the schema", w.Msg)
		}
	}
	var pe *pipeline.PanicError
	if errors.As(o.res.Err, &pe) && slices.Contains(hooks, pe.Hook) {
		// Already reported from the trace; keep the message when the trace missed it.
		if !t.Failed() {
			t.ErrorAt(rule, o.at+", "+pe.Hook, "%s", callProblem(pe.Error()))
		}
	}
}

// callName names a traced call: the hook, and for a frame call which frame
// ("on_response_frame frame 100", "on_response_frame last call").
func callName(e trace.Event) string {
	switch {
	case e.Frame == nil:
		return e.Hook
	case e.Last:
		return fmt.Sprintf("%s frame %d (last=true)", e.Hook, *e.Frame)
	}
	return fmt.Sprintf("%s frame %d", e.Hook, *e.Frame)
}

// callPrefix is how the pipeline and the plugin host introduce a failed
// call ("plugin "x" failed in on_request: plugin "x": on_request: "); the
// finding names the call already.
var callPrefix = regexp.MustCompile(`^(plugin "[^"]*" (failed|panicked) in [a-z_]+: )?(plugin "[^"]*": [a-z_ ]+: )?`)

// callProblem words a failed call by what happened: a call that ran out
// its deadline is a deadline overrun, a process that went away exited,
// and only a plugin that panicked panicked.
func callProblem(msg string) string {
	panicked := strings.Contains(msg, "\" panicked in ")
	rest := callPrefix.ReplaceAllString(msg, "")
	switch {
	case strings.Contains(msg, pluginhost.ErrDeadline.Error()):
		rest = strings.TrimSuffix(rest, ": "+context.DeadlineExceeded.Error())
		return "deadline overrun: " + rest + "; the plugin hung or was too slow, and the call was abandoned"
	case strings.Contains(msg, pluginhost.ErrExited.Error()):
		return "the " + rest + " during the call"
	case panicked:
		return "panicked: " + rest
	}
	return "failed: " + rest
}

func hookIn(msg string, hooks []string) bool {
	for _, h := range hooks {
		if strings.HasPrefix(msg, h+" ") {
			return true
		}
	}
	return false
}
