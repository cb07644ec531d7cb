package faults

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/abkit/abkit/internal/refruntime"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/intercept"
	"github.com/abkit/abkit/sdk/runtimekit"
)

// A faulty runtime is abkit's reference runtime (internal/refruntime)
// behind a faulty adapter: the fault is where an adapter's or a runtime's
// bug sits, in what it hands the runtime (the scenario: chain, config,
// policies), what a hook observes and what the runtime makes of a hook's
// answer (each probe call and its reply), or what it reports (the run).
// None is one of refruntime.Bugs.

// RuntimeFault is a faulty runtime.
type RuntimeFault struct {
	Fault
	// In changes the scenario before the runtime gets it.
	pipeIn func(*abkitv1.PipelineScenario)
	dIn    func(*abkitv1.InterceptScenario)
	hIn    func(*abkitv1.HookScenario)
	// Call changes a hook call before the probe sees it (what the hook
	// observes); skip makes the runtime not call the hook at all (its
	// reply is an empty continue). Reply changes the probe's answer
	// before the runtime reads it. Both see the scenario's state.
	call  func(st *callState, pc *abkitv1.ProbeCall) (skip bool)
	reply func(st *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply)
	// Out changes what the runtime reports; pipeOutSt sees the
	// scenario's state too.
	pipeOut   func(sc *abkitv1.PipelineScenario, run *abkitv1.PipelineRun)
	pipeOutSt func(st *callState, run *abkitv1.PipelineRun)
	dOut      func(sc *abkitv1.InterceptScenario, st *callState, run *abkitv1.InterceptRun)
	hOut      func(sc *abkitv1.HookScenario, run *abkitv1.HookRun)
}

// callState is what a fault remembers across one scenario's calls.
type callState struct {
	mu        sync.Mutex
	pipe      *abkitv1.PipelineScenario
	state     map[uint32]string // last state a probe set, by probe
	panicked  map[uint32]bool   // exchanges whose finisher panicked
	cancelled map[uint32]bool   // exchanges the client cancelled
	reasons   []string          // raw reasons of replies
	leaked    map[uint32][]byte // last undeclared request write, by exchange
}

// Runtimes lists the faulty runtimes, sorted by name.
func Runtimes() []RuntimeFault {
	out := slices.DeleteFunc(runtimeFaults(), func(f RuntimeFault) bool { return f.Name == ControlName })
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// RuntimeByName returns the faulty runtime called name.
func RuntimeByName(name string) (RuntimeFault, bool) {
	for _, f := range runtimeFaults() {
		if f.Name == name {
			return f, true
		}
	}
	return RuntimeFault{}, false
}

func rf(name, rule, story string) RuntimeFault {
	return RuntimeFault{Fault: Fault{Name: name, Rule: rule, Story: story}}
}

func specOf(sc *abkitv1.PipelineScenario, probe uint32) *abkitv1.ProbeSpec {
	if sc == nil {
		return nil
	}
	for _, p := range sc.GetPlugins() {
		if p.GetProbe() == probe {
			return p
		}
	}
	return nil
}

func exchangeOf(sc *abkitv1.PipelineScenario, i uint32) *abkitv1.ExchangeSpec {
	if sc == nil || int(i) >= len(sc.GetExchanges()) {
		return nil
	}
	return sc.GetExchanges()[i]
}

func dropBuildErrors(rule string) func(*abkitv1.PipelineScenario, *abkitv1.PipelineRun) {
	return func(_ *abkitv1.PipelineScenario, run *abkitv1.PipelineRun) {
		run.BuildErrors = slices.DeleteFunc(run.BuildErrors, func(e *abkitv1.BuildError) bool { return e.GetRule() == rule })
	}
}

// ControlName names the control runtime: the reference behind the
// faulty adapter with no fault (every call and reply passes through the
// probe wrapper unchanged). It must pass the runtime suite, or the
// corpus's kills could be the harness's.
const ControlName = "control"

func runtimeFaults() []RuntimeFault {
	var fs []RuntimeFault
	add := func(f RuntimeFault, set func(*RuntimeFault)) { set(&f); fs = append(fs, f) }
	fs = append(fs, RuntimeFault{Fault: Fault{Name: ControlName}, call: func(*callState, *abkitv1.ProbeCall) bool { return false }})

	// Family P.
	add(rf("r-names-case-folded", "P1", "chain entries are looked up case-insensitively, so Auth and auth are one plugin"), func(f *RuntimeFault) {
		f.pipeIn = func(sc *abkitv1.PipelineScenario) {
			for _, e := range sc.Entries {
				e.Plugin = strings.ToLower(e.Plugin)
			}
			for _, p := range sc.Plugins {
				p.Name = strings.ToLower(p.Name)
			}
		}
	})
	add(rf("r-writer-not-reader", "P4", "the adapter copies writes_*_body but leaves reads_body as declared, so a writer that did not say it reads gets no body"), func(f *RuntimeFault) {
		f.call = func(st *callState, pc *abkitv1.ProbeCall) bool {
			if c := specOf(st.pipe, pc.GetProbe()).GetCapabilities(); c != nil && !c.GetReadsBody() && (c.GetWritesRequestBody() || c.GetWritesResponseBody()) {
				pc.HasRequestBody, pc.RequestBody, pc.HasResponseBody, pc.ResponseBody = false, nil, false, nil
			}
			return false
		}
	})
	add(rf("r-null-config-refused", "P6", "config: null is read as a config that is present and invalid"), func(f *RuntimeFault) {
		f.pipeOut = func(sc *abkitv1.PipelineScenario, run *abkitv1.PipelineRun) {
			for _, e := range sc.GetEntries() {
				if string(e.GetConfigJson()) == "null" {
					run.BuildErrors = append(run.BuildErrors, runtimekit.BuildError("P6", e.GetPlugin(), "config is not an object"))
					run.Exchanges = nil
				}
			}
		}
	})
	add(rf("r-requires-unchecked", "P7", "requires is checked when a plugin is loaded into the catalog, never per chain"), func(f *RuntimeFault) { f.pipeOut = dropBuildErrors("P7") })
	add(rf("r-requires-any-hint", "P8", "requires_any is treated as a hint for ordering, not a requirement"), func(f *RuntimeFault) { f.pipeOut = dropBuildErrors("P8") })
	add(rf("r-one-writer-per-chain", "P9", "the one-writer check counts body writers per chain, not per direction"), func(f *RuntimeFault) {
		f.pipeOut = func(sc *abkitv1.PipelineScenario, run *abkitv1.PipelineRun) {
			var req, resp string
			for _, e := range sc.GetEntries() {
				for _, p := range sc.GetPlugins() {
					if p.GetName() != e.GetPlugin() || e.GetOnError() == "off" {
						continue
					}
					if p.GetCapabilities().GetWritesRequestBody() {
						req = p.GetName()
					}
					if p.GetCapabilities().GetWritesResponseBody() {
						resp = p.GetName()
					}
				}
			}
			if req != "" && resp != "" && req != resp && len(run.GetBuildErrors()) == 0 {
				run.BuildErrors = append(run.BuildErrors, runtimekit.BuildError("P9", resp, "a second body writer in the chain (the first is "+req+")"))
				run.Exchanges, run.StartError = nil, ""
			}
		}
	})
	add(rf("r-refusals-unreported", "P17", "an undeclared body write is refused silently, without the warning that names the plugin"), func(f *RuntimeFault) {
		f.pipeOut = func(_ *abkitv1.PipelineScenario, run *abkitv1.PipelineRun) {
			for _, x := range run.GetExchanges() {
				x.Warnings = slices.DeleteFunc(x.Warnings, func(w *abkitv1.RuntimeWarning) bool { return w.GetRule() == "P17" })
			}
		}
	})
	add(rf("r-undeclared-write-upstream", "P17", "the listener sends upstream whatever request body the plugins left, an undeclared writer's too"), func(f *RuntimeFault) {
		f.reply = func(st *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if pc.GetHook() == "request" && r.GetWriteRequestBody() && !specOf(st.pipe, pc.GetProbe()).GetCapabilities().GetWritesRequestBody() {
				st.mu.Lock()
				st.leaked[pc.GetExchange()] = r.GetBody()
				st.mu.Unlock()
			}
		}
		f.pipeOutSt = func(st *callState, run *abkitv1.PipelineRun) {
			st.mu.Lock()
			defer st.mu.Unlock()
			for i, x := range run.GetExchanges() {
				if b, ok := st.leaked[uint32(i)]; ok {
					x.RequestBody = b
				}
			}
		}
	})
	add(rf("r-waypoint-as-proxy", "P10", "the mode field is read from the chain file's top level only; a waypoint chain built in code runs as a proxy"), func(f *RuntimeFault) {
		f.pipeIn = func(sc *abkitv1.PipelineScenario) {
			if sc.Mode == "waypoint" {
				sc.Mode = "proxy"
			}
		}
	})
	add(rf("r-bodies-for-everyone", "P11", "bodies are buffered for the whole chain and handed to every plugin, reader or not"), func(f *RuntimeFault) {
		f.call = func(st *callState, pc *abkitv1.ProbeCall) bool {
			if (pc.GetHook() == "request" || pc.GetHook() == "response") && !pc.GetHasRequestBody() {
				pc.HasRequestBody, pc.RequestBody = true, []byte{}
			}
			return false
		}
	})
	add(rf("r-init-error-logged", "P12", "an Init failure is logged and the chain serves anyway"), func(f *RuntimeFault) {
		f.pipeOut = func(_ *abkitv1.PipelineScenario, run *abkitv1.PipelineRun) { run.StartError = "" }
	})
	add(rf("r-shutdown-error-dropped", "P13", "Shutdown errors are logged, never returned to the caller of Stop"), func(f *RuntimeFault) {
		f.pipeOut = func(_ *abkitv1.PipelineScenario, run *abkitv1.PipelineRun) { run.StopError = "" }
	})
	add(rf("r-ready-first-only", "P14", "readiness asks only the first plugin of the chain"), func(f *RuntimeFault) {
		f.call = func(st *callState, pc *abkitv1.ProbeCall) bool {
			ps := st.pipe.GetPlugins()
			return pc.GetHook() == "ready" && len(ps) > 0 && pc.GetProbe() != ps[0].GetProbe()
		}
	})
	add(rf("r-deny-always-403", "P15", "every denial is answered 403 Forbidden, whatever status the plugin gave"), func(f *RuntimeFault) {
		f.pipeOut = func(_ *abkitv1.PipelineScenario, run *abkitv1.PipelineRun) {
			for _, x := range run.GetExchanges() {
				if x.GetOutcome().GetKind() == "deny" {
					x.Status = 403
				}
			}
		}
	})
	add(rf("r-response-reject-ignored", "P16", "OnResponse's reject is ignored once the upstream has answered"), func(f *RuntimeFault) {
		f.reply = func(_ *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if pc.GetHook() == "response" && r.GetAction().GetKind() == "reject" {
				r.Action = nil
			}
		}
	})
	add(rf("r-media-type-exact", "P18", "the stream check compares Content-Type to \"text/event-stream\" byte for byte"), func(f *RuntimeFault) {
		f.pipeIn = func(sc *abkitv1.PipelineScenario) {
			for _, x := range sc.GetExchanges() {
				for _, h := range x.GetUpstream().GetHeader() {
					for i, v := range h.GetValues() {
						if strings.EqualFold(h.GetName(), "Content-Type") && v != "text/event-stream" && strings.Contains(strings.ToLower(v), "event-stream") {
							h.Values[i] = "application/octet-stream"
						}
					}
				}
			}
		}
	})
	add(rf("r-framer-lf-only", "P19", "the SSE framer splits on \\n only, so a CR-framed stream is one frame"), func(f *RuntimeFault) {
		f.pipeIn = func(sc *abkitv1.PipelineScenario) {
			for _, x := range sc.GetExchanges() {
				u := x.GetUpstream()
				for i, c := range u.GetChunks() {
					u.Chunks[i] = []byte(strings.ReplaceAll(strings.ReplaceAll(string(c), "\r\n", "\x00"), "\r", "")) // lone CRs vanish
					u.Chunks[i] = []byte(strings.ReplaceAll(string(u.Chunks[i]), "\x00", "\r\n"))
				}
			}
		}
	})
	add(rf("r-frames-count-closing", "P20", "the frame counter counts the closing call as a frame"), func(f *RuntimeFault) {
		f.pipeOut = func(_ *abkitv1.PipelineScenario, run *abkitv1.PipelineRun) {
			for _, x := range run.GetExchanges() {
				if x.GetStreamed() {
					x.Frames++
				}
			}
		}
	})
	add(rf("r-no-closing-after-error", "P21", "when the upstream stream breaks, the closing call is skipped: the error path returns early"), func(f *RuntimeFault) {
		f.call = func(st *callState, pc *abkitv1.ProbeCall) bool {
			x := exchangeOf(st.pipe, pc.GetExchange())
			return pc.GetHook() == "frame" && pc.GetLast() && len(pc.GetFrame()) == 0 && x.GetUpstream().GetEarlyEnd()
		}
	})
	add(rf("r-json-frame-not-last", "P22", "a JSON body is sent as a data frame, flagged last=false like every other"), func(f *RuntimeFault) {
		f.call = func(st *callState, pc *abkitv1.ProbeCall) bool {
			x := exchangeOf(st.pipe, pc.GetExchange())
			if pc.GetHook() == "frame" && len(x.GetUpstream().GetChunks()) == 0 && len(pc.GetFrame()) > 0 {
				pc.Last = false
			}
			return false
		}
	})
	add(rf("r-everyone-streams", "P23", "every plugin is wrapped in a streaming adapter, so non-streamers get frames"), func(f *RuntimeFault) {
		f.pipeIn = func(sc *abkitv1.PipelineScenario) {
			for _, p := range sc.Plugins {
				if !slices.Contains(p.Behaviours, "stream") {
					p.Behaviours = append(p.Behaviours, "stream")
				}
			}
		}
	})
	add(rf("r-frame-reject-ignored", "P25", "a reject in a frame call is ignored once the response head is sent"), func(f *RuntimeFault) {
		f.reply = func(_ *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if pc.GetHook() == "frame" && r.GetAction().GetKind() == "reject" {
				r.Action = nil
			}
		}
	})
	add(rf("r-no-finish-when-cancelled", "P26", "OnFinish is skipped for an exchange the client cancelled: the finish loop checks the request context"), func(f *RuntimeFault) {
		f.call = func(st *callState, pc *abkitv1.ProbeCall) bool {
			st.mu.Lock()
			defer st.mu.Unlock()
			return pc.GetHook() == "finish" && (st.cancelled[pc.GetExchange()] || exchangeOf(st.pipe, pc.GetExchange()).GetCancelled())
		}
		f.reply = func(st *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if r.GetCancelClient() || pc.GetCtxDone() {
				st.mu.Lock()
				st.cancelled[pc.GetExchange()] = true
				st.mu.Unlock()
			}
		}
	})
	add(rf("r-finish-timeout-fixed", "P28", "the finish deadline is a constant 5 s; the configured finish timeout is never read"), func(f *RuntimeFault) {
		f.call = func(st *callState, pc *abkitv1.ProbeCall) bool {
			if pc.GetHook() == "finish" && pc.GetDeadlineNs() > 0 {
				pc.DeadlineNs = int64(5 * time.Second)
			}
			return false
		}
	})
	add(rf("r-outcome-prefilled", "P29", "the exchange's outcome is pre-filled as allow when it starts, so hooks see one before finish"), func(f *RuntimeFault) {
		f.call = func(_ *callState, pc *abkitv1.ProbeCall) bool {
			if pc.GetHook() == "request" || pc.GetHook() == "response" {
				pc.HasOutcome, pc.Outcome = true, &abkitv1.Outcome{Kind: "allow", Status: 200}
			}
			return false
		}
	})
	add(rf("r-finish-panic-stops", "P30", "a panicking OnFinish ends the finish loop: the recover is around the loop, not each call"), func(f *RuntimeFault) {
		f.call = func(st *callState, pc *abkitv1.ProbeCall) bool {
			st.mu.Lock()
			defer st.mu.Unlock()
			return pc.GetHook() == "finish" && st.panicked[pc.GetExchange()]
		}
		f.reply = func(st *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if pc.GetHook() == "finish" && r.GetPanic() {
				st.mu.Lock()
				st.panicked[pc.GetExchange()] = true
				st.mu.Unlock()
			}
		}
	})
	add(rf("r-state-per-plugin", "P31", "per-exchange state is kept in a map keyed by plugin, not by exchange"), func(f *RuntimeFault) {
		f.call = func(st *callState, pc *abkitv1.ProbeCall) bool {
			st.mu.Lock()
			defer st.mu.Unlock()
			if s, ok := st.state[pc.GetProbe()]; ok && !pc.GetHasState() {
				pc.HasState, pc.State = true, s
			}
			return false
		}
		f.reply = func(st *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if r.GetSetState() {
				st.mu.Lock()
				st.state[pc.GetProbe()] = r.GetState()
				st.mu.Unlock()
			}
		}
	})
	add(rf("r-header-deletes-ignored", "P32", "header deltas apply their sets but not their deletions"), func(f *RuntimeFault) {
		f.reply = func(_ *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if d := r.GetRequestHeader(); d != nil {
				d.Deleted = nil
			}
		}
	})
	add(rf("r-response-headers-lost", "P33", "response header changes are applied to a copy of the header map the client never sees"), func(f *RuntimeFault) {
		f.reply = func(_ *callState, _ *abkitv1.ProbeCall, r *abkitv1.ProbeReply) { r.ResponseHeader = nil }
	})
	add(rf("r-rejection-body-dropped", "P34", "a rejection's body is ignored and the reason sent as plain text"), func(f *RuntimeFault) {
		f.reply = func(_ *callState, _ *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if rj := r.GetAction().GetRejection(); rj != nil {
				r.Action.Rejection = nil
			}
		}
	})
	add(rf("r-request-path-only", "P35", "the adapter builds the request from the path alone, dropping scheme, host and query"), func(f *RuntimeFault) {
		f.pipeIn = func(sc *abkitv1.PipelineScenario) {
			for _, x := range sc.GetExchanges() {
				if rq := x.GetRequest(); rq != nil {
					rq.Scheme, rq.Host = "", ""
					if i := strings.IndexByte(rq.Url, '?'); i >= 0 {
						rq.Url = rq.Url[:i]
					}
				}
			}
		}
	})
	add(rf("r-identity-not-kept", "P36", "an identity a plugin sets stays on that plugin's copy of the exchange"), func(f *RuntimeFault) {
		f.reply = func(_ *callState, _ *abkitv1.ProbeCall, r *abkitv1.ProbeReply) { r.SetIdentityJson = nil }
	})

	// Family D.
	add(rf("d-unknown-point-no-op", "D1", "a dispatch at an unknown point walks no extension and returns the payload, instead of failing"), func(f *RuntimeFault) {
		f.dOut = func(sc *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			if intercept.Point(sc.GetPoint()).Valid() {
				return
			}
			for _, r := range run.GetResults() {
				r.Error, r.PayloadJson = "", sc.GetPayloadJson()
			}
		}
	})
	add(rf("d-payload-unchecked", "D2", "payloads are passed to extensions without checking their type"), func(f *RuntimeFault) {
		f.dOut = func(sc *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			for _, r := range run.GetResults() {
				if strings.Contains(r.GetError(), "payload") {
					r.Error, r.PayloadJson = "", sc.GetPayloadJson()
				}
			}
		}
	})
	add(rf("d-manifest-timeout-ignored", "D3", "the manifest's timeout is never read: every call gets the default budget"), func(f *RuntimeFault) {
		f.dIn = func(sc *abkitv1.InterceptScenario) {
			for _, e := range sc.Extensions {
				if e.Manifest != nil {
					e.Manifest.TimeoutNs = 0
				}
			}
		}
	})
	add(rf("d-priority-descending", "D4", "extensions are sorted by priority descending, highest first"), func(f *RuntimeFault) {
		f.dIn = func(sc *abkitv1.InterceptScenario) {
			for _, e := range sc.Extensions {
				if e.Manifest != nil {
					e.Manifest.Priority = -e.Manifest.Priority
				}
			}
		}
	})
	add(rf("d-nameless-numbered", "D5", "an extension without a pluginId is given its index as ID instead of being skipped"), func(f *RuntimeFault) {
		f.dIn = func(sc *abkitv1.InterceptScenario) {
			for i, e := range sc.Extensions {
				if e.Manifest != nil && e.Manifest.PluginId == "" {
					e.Manifest.PluginId = "ext-" + string(rune('a'+i))
				}
			}
		}
	})
	add(rf("d-continue-marks-changed", "D6", "every answer that is not a block marks the payload changed"), func(f *RuntimeFault) {
		f.dOut = func(_ *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			for _, r := range run.GetResults() {
				if !r.GetBlocked() && r.GetError() == "" {
					r.Changed = true
				}
			}
		}
	})
	add(rf("d-block-reason-dropped", "D7", "the block's reason is not copied into the result"), func(f *RuntimeFault) {
		f.dOut = func(_ *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			for _, r := range run.GetResults() {
				if r.GetBlocked() {
					r.Reason = ""
				}
			}
		}
	})
	add(rf("d-replace-as-continue", "D8", "replace answers are read as continue: the replacement field is never decoded"), func(f *RuntimeFault) {
		f.reply = func(_ *callState, _ *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if r.GetDecision() == "replace" {
				r.Decision, r.ReplacementJson = "continue", nil
			}
		}
	})
	add(rf("d-deny-as-block", "D9", "deny is mapped to block everywhere, permission.decision included"), func(f *RuntimeFault) {
		f.reply = func(_ *callState, _ *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if r.GetDecision() == "deny" {
				r.Decision = "block"
				if r.Reason == "" {
					r.Reason = "denied"
				}
			}
		}
	})
	add(rf("d-host-verdict-wins", "D10", "at permission.decision the host's verdict is kept whatever the extensions answer"), func(f *RuntimeFault) {
		f.reply = func(_ *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if pc.GetPoint() == "permission.decision" && (r.GetDecision() == "allow" || r.GetDecision() == "deny") {
				r.Decision = "continue"
			}
		}
	})
	add(rf("d-payload-re-encoded", "D11", "the payload is decoded and re-encoded after every walk, so an unchanged one comes back reformatted"), func(f *RuntimeFault) {
		f.dOut = func(_ *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			for _, r := range run.GetResults() {
				var v any
				if !r.GetChanged() && json.Unmarshal(r.GetPayloadJson(), &v) == nil {
					r.PayloadJson, _ = json.MarshalIndent(v, "", "  ")
				}
			}
		}
	})
	add(rf("d-required-flag-ignored", "D12", "the required flag is not read from the manifest: every extension is optional"), func(f *RuntimeFault) {
		f.dIn = func(sc *abkitv1.InterceptScenario) {
			for _, e := range sc.Extensions {
				if e.Manifest != nil && len(e.Manifest.Slots) == 0 {
					e.Manifest.Required = false
				}
			}
		}
	})
	add(rf("d-optional-failure-silent", "D13", "an optional extension's failure is swallowed without a warning"), func(f *RuntimeFault) {
		f.dOut = func(_ *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			run.Warnings = nil
			for _, r := range run.GetResults() {
				r.Warnings = nil
			}
		}
	})
	add(rf("d-violations-logged", "D14", "a contract violation is logged and the walk goes on with the payload unchanged"), func(f *RuntimeFault) {
		f.dOut = func(sc *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			for _, r := range run.GetResults() {
				if r.GetFailure().GetKind() == "violation" {
					r.Failure, r.Error, r.PayloadJson = nil, "", sc.GetPayloadJson()
				}
			}
		}
	})
	add(rf("d-warn-once-per-dispatch", "D15", "the warn-once set is made per dispatch, so concurrent dispatches of one failure each warn"), func(f *RuntimeFault) {
		f.dOut = func(_ *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			if len(run.GetWarnings()) == 1 && len(run.GetResults()) > 1 {
				for range run.GetResults()[1:] {
					run.Warnings = append(run.Warnings, proto.Clone(run.Warnings[0]).(*abkitv1.ExtensionFailure))
				}
			}
		}
	})
	add(rf("d-reason-unredacted", "D16", "the block reason is copied from the raw answer after redaction ran on the result"), func(f *RuntimeFault) {
		f.reply = func(st *callState, _ *abkitv1.ProbeCall, r *abkitv1.ProbeReply) {
			if r.GetReason() != "" {
				st.mu.Lock()
				st.reasons = append(st.reasons, r.GetReason())
				st.mu.Unlock()
			}
		}
		f.dOut = func(_ *abkitv1.InterceptScenario, st *callState, run *abkitv1.InterceptRun) {
			st.mu.Lock()
			defer st.mu.Unlock()
			for _, r := range run.GetResults() {
				if r.GetReason() != "" && len(st.reasons) > 0 {
					r.Reason = st.reasons[len(st.reasons)-1]
				}
			}
		}
	})
	add(rf("d-slot-names-unchecked", "D17", "slot names are not parsed when the dispatcher is built; a bad one is ignored"), func(f *RuntimeFault) {
		f.dOut = func(_ *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			if strings.Contains(run.GetBuildError(), "slot") {
				run.BuildError = ""
			}
		}
	})
	add(rf("d-owners-not-checked", "D18", "the single-owner check runs only in the catalog linter, not when a dispatcher is built"), func(f *RuntimeFault) {
		f.dOut = func(_ *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			if strings.Contains(run.GetBuildError(), "own") {
				run.BuildError = ""
			}
		}
	})
	add(rf("d-slots-not-read", "D19", "the manifest's slots field is dropped by the adapter's JSON mapping (slot vs slots)"), func(f *RuntimeFault) {
		f.dIn = func(sc *abkitv1.InterceptScenario) {
			for _, e := range sc.Extensions {
				if e.Manifest != nil {
					e.Manifest.Slots = nil
				}
			}
		}
	})
	add(rf("d-notify-warnings-dropped", "D20", "a failed or dropped notification is not warned about"), func(f *RuntimeFault) {
		f.dOut = func(sc *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) {
			if intercept.IsEventOnly(intercept.Point(sc.GetPoint())) {
				run.Warnings = nil
				for _, r := range run.GetResults() {
					r.Warnings = nil
				}
			}
		}
	})

	// Family H.
	add(rf("h-order-ignored", "H1", "the hooks' order field is not read: hooks run by ID"), func(f *RuntimeFault) {
		f.hIn = func(sc *abkitv1.HookScenario) {
			for _, h := range sc.Hooks {
				if h.Hook != nil {
					h.Hook.Order = 0
				}
			}
		}
	})
	add(rf("h-fail-open-unrecorded", "H2", "a fail-open hook's failure is skipped without being recorded in the result"), func(f *RuntimeFault) {
		f.hOut = func(_ *abkitv1.HookScenario, run *abkitv1.HookRun) { run.Errors = nil }
	})
	add(rf("h-fail-closed-as-open", "H3", "the policy parser knows only fail-open; fail-closed falls back to it"), func(f *RuntimeFault) {
		f.hIn = func(sc *abkitv1.HookScenario) {
			for _, h := range sc.Hooks {
				if h.Hook != nil && h.Hook.Policy == "fail-closed" {
					h.Hook.Policy = "fail-open"
				}
			}
		}
	})
	add(rf("h-reject-as-failure", "H4", "a submit rejection is reported as a hook failure, its reason lost"), func(f *RuntimeFault) {
		f.hOut = func(_ *abkitv1.HookScenario, run *abkitv1.HookRun) {
			if fl := run.GetFailure(); fl != nil && fl.GetKind() == "reject" {
				fl.Kind, fl.Message = "error", "hook failed"
			}
		}
	})
	add(rf("h-tool-rewrite-on-copy", "H5", "a tool reactor's rewrite is applied to a copy of the event; the original goes on"), func(f *RuntimeFault) {
		f.hOut = func(sc *abkitv1.HookScenario, run *abkitv1.HookRun) {
			if sc.GetKind() == "tool" && run.GetFailure() == nil && !run.GetSwallowed() {
				run.OutputJson = sc.GetInputJson()
			}
		}
	})
	add(rf("h-tool-policy-default", "H6", "the bus's tool policy is not passed through: every reactor failure is fail-open"), func(f *RuntimeFault) {
		f.hIn = func(sc *abkitv1.HookScenario) { sc.ToolPolicy = "fail-open" }
	})
	return fs
}

// Serve runs the faulty runtime rf (it does not return).
func (f RuntimeFault) Serve() {
	rt := refruntime.Runtime(refruntime.Options{Name: "faulty-" + f.Name})
	inner := rt
	rt.Pipeline = func(ctx context.Context, sc runtimekit.PipelineScenario) (*abkitv1.PipelineRun, error) {
		s := proto.Clone(sc.PipelineScenario).(*abkitv1.PipelineScenario)
		if f.pipeIn != nil {
			f.pipeIn(s)
		}
		st := newState(s)
		run, err := inner.Pipeline(ctx, runtimekit.PipelineScenario{PipelineScenario: s, Probes: f.wrap(sc.Probes, st)})
		if err == nil && run != nil && f.pipeOut != nil {
			f.pipeOut(sc.PipelineScenario, run)
		}
		if err == nil && run != nil && f.pipeOutSt != nil {
			f.pipeOutSt(st, run)
		}
		return run, err
	}
	rt.Intercept = func(ctx context.Context, sc runtimekit.InterceptScenario) (*abkitv1.InterceptRun, error) {
		s := proto.Clone(sc.InterceptScenario).(*abkitv1.InterceptScenario)
		if f.dIn != nil {
			f.dIn(s)
		}
		st := newState(nil)
		run, err := inner.Intercept(ctx, runtimekit.InterceptScenario{InterceptScenario: s, Probes: f.wrap(sc.Probes, st)})
		if err == nil && run != nil && f.dOut != nil {
			f.dOut(sc.InterceptScenario, st, run)
		}
		return run, err
	}
	rt.Hooks = func(ctx context.Context, sc runtimekit.HookScenario) (*abkitv1.HookRun, error) {
		s := proto.Clone(sc.HookScenario).(*abkitv1.HookScenario)
		if f.hIn != nil {
			f.hIn(s)
		}
		run, err := inner.Hooks(ctx, runtimekit.HookScenario{HookScenario: s, Probes: f.wrap(sc.Probes, newState(nil))})
		if err == nil && run != nil && f.hOut != nil {
			f.hOut(sc.HookScenario, run)
		}
		return run, err
	}
	runtimekit.Serve(rt)
}

func newState(sc *abkitv1.PipelineScenario) *callState {
	return &callState{pipe: sc, state: map[uint32]string{}, panicked: map[uint32]bool{}, cancelled: map[uint32]bool{}, leaked: map[uint32][]byte{}}
}

// wrap puts the fault's call and reply changes around the probes.
func (f RuntimeFault) wrap(p *runtimekit.Probes, st *callState) *runtimekit.Probes {
	if f.call == nil && f.reply == nil {
		return p
	}
	return runtimekit.NewProbes(faultyProbes{inner: p, f: f, st: st})
}

type faultyProbes struct {
	inner *runtimekit.Probes
	f     RuntimeFault
	st    *callState
}

// Call forwards one hook call. The runtime's Probes.Call has filled what
// the hook observed of its context (done, deadline); the inner Call fills
// them again from the context it is given, so that context reproduces
// them: cancelled when the hook's was, without a deadline so the one
// recorded stays.
func (fp faultyProbes) Call(_ context.Context, pc *abkitv1.ProbeCall, _ ...grpc.CallOption) (*abkitv1.ProbeReply, error) {
	if fp.f.call != nil && fp.f.call(fp.st, pc) {
		return &abkitv1.ProbeReply{}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if pc.GetCtxDone() {
		cancel()
	}
	r := fp.inner.Call(ctx, pc).ProbeReply
	if fp.f.reply != nil {
		fp.f.reply(fp.st, pc, r)
	}
	return r, nil
}
