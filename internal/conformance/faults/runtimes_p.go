package faults

import (
	"slices"
	"strings"
	"time"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/runtimekit"
)

// pChainFaults lists the faulty runtimes of rules P1-P14: building a chain, bodies and the lifecycle.
func pChainFaults() []RuntimeFault {
	var fs runtimeFaultList
	add := fs.add
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
	return fs
}

// pExchangeFaults lists the faulty runtimes of rules P15-P25: one exchange, its bodies and its frames.
func pExchangeFaults() []RuntimeFault {
	var fs runtimeFaultList
	add := fs.add
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
	return fs
}

// pFinishFaults lists the faulty runtimes of rules P26-P36: finishing, state, headers, rejections and identity.
func pFinishFaults() []RuntimeFault {
	var fs runtimeFaultList
	add := fs.add
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
	add(rf("r-finish-declaration-order", "P27", "the finish loop ranges over the chain forwards, as the request walk it was copied from does"), func(f *RuntimeFault) {
		f.reorder = finishForwards
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

	return fs
}

// finishForwards holds an exchange's OnFinish calls back until every
// plugin that will finish (each finisher whose OnRequest was called) has
// been called, then makes them in the reverse of the order they came in:
// declaration order, where the reference calls LIFO.
func finishForwards(st *callState, pc *abkitv1.ProbeCall) []*abkitv1.ProbeCall {
	st.mu.Lock()
	defer st.mu.Unlock()
	x := pc.GetExchange()
	switch pc.GetHook() {
	case "request":
		if slices.Contains(specOf(st.pipe, pc.GetProbe()).GetBehaviours(), "finish") {
			st.finishers[x]++
		}
	case "finish":
		st.held[x] = append(st.held[x], pc)
		if len(st.held[x]) < st.finishers[x] {
			return nil
		}
		out := slices.Clone(st.held[x])
		slices.Reverse(out)
		delete(st.held, x)
		st.finishers[x] = 0
		return out
	}
	return []*abkitv1.ProbeCall{pc}
}
