package faults

import (
	"encoding/json"
	"strings"

	"google.golang.org/protobuf/proto"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/intercept"
)

// dBuildFaults lists the faulty runtimes of rules D1-D7: points, payloads, manifests and the first decisions.
func dBuildFaults() []RuntimeFault {
	var fs runtimeFaultList
	add := fs.add
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
	return fs
}

// dDecisionFaults lists the faulty runtimes of rules D8-D13: replacements, permissions, payload changes and failures.
func dDecisionFaults() []RuntimeFault {
	var fs runtimeFaultList
	add := fs.add
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
		f.dOut = func(_ *abkitv1.InterceptScenario, _ *callState, run *abkitv1.InterceptRun) { dropWarnings(run) }
	})
	return fs
}

// dropWarnings removes every warning of the run, the dispatch's and each
// result's.
func dropWarnings(run *abkitv1.InterceptRun) {
	run.Warnings = nil
	for _, r := range run.GetResults() {
		r.Warnings = nil
	}
}

// dWarningFaults lists the faulty runtimes of rules D14-D20: violations, warnings, redaction, slots and notifications.
func dWarningFaults() []RuntimeFault {
	var fs runtimeFaultList
	add := fs.add
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
				dropWarnings(run)
			}
		}
	})

	return fs
}

// hFaults lists the faulty runtimes of rules H1-H6: hook buses.
func hFaults() []RuntimeFault {
	var fs runtimeFaultList
	add := fs.add
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
