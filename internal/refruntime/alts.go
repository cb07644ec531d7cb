package refruntime

import (
	"regexp"

	"github.com/abkit/abkit/internal/pipeline"
)

// Alt names one other allowed behaviour the reference can take at a
// choice point of the contracts (see Alts), so that the conformance
// suite can be checked on a runtime that conforms differently: declared,
// it must pass; judged --strict, it must fail the choice's cases.
type Alt string

// AltSpec is what an Alt changes: the choice point and the alternative it
// takes there, as conformance.ChoicePoints names them.
type AltSpec struct {
	Choice, Alternative string
}

// Alts lists every alternative Options.Alt can take.
var Alts = map[Alt]AltSpec{
	// AuthBridge's registry fails fast on an unknown name or a config
	// error and joins only the requires errors.
	"fail-fast-build": {Choice: "P6.build-errors", Alternative: "fail-fast"},
	// Reasonix reports an optional extension's failure through its warn
	// callback only; the dispatch's result carries none.
	"warnings-callback-only": {Choice: "D13.warnings", Alternative: "callback"},
	// Reasonix sends events as JSON-RPC notifications: there is no reply,
	// so an observer's failure is never seen; only drops are warned.
	"notify-fire-and-forget": {Choice: "D20.notify", Alternative: "fire-and-forget"},
	// AuthBridge allows a name more than once in a chain.
	"repeated-names": {Choice: "P1.names", Alternative: "repeated"},
	// AuthBridge's Start stops the plugins it started when a later Init
	// fails.
	"stop-started-on-failure": {Choice: "P12.start-failure", Alternative: "stop-started"},
	// AuthBridge's NotReadyPlugin names the first plugin not ready.
	"ready-names-first": {Choice: "P14.ready", Alternative: "first"},
	// AuthBridge's Context.SetBody keeps an undeclared writer's body in
	// memory for the later plugins; the wire never gets it.
	"keep-undeclared-writes": {Choice: "P17.undeclared-write", Alternative: "kept"},
	// AuthBridge's sseframe reader hands plugins each event's joined data.
	"data-payload-frames": {Choice: "P19.frame", Alternative: "data-payload"},
	// AuthBridge's reverse proxy re-frames the stream it relays.
	"reframed-relay": {Choice: "P19.relay", Alternative: "reframed"},
	// AuthBridge's listeners write a denial as a JSON error body.
	"json-deny-body": {Choice: "P15.deny-wire", Alternative: "json"},
	// AuthBridge's RunResponseFrame gives streamers a JSON response's one
	// frame after the OnResponse walk.
	"frames-after-walk": {Choice: "P22.timing", Alternative: "after-walk"},
	// A listener that relays each frame before dispatching it has sent
	// the rejecting frame already.
	"frames-relayed-first": {Choice: "P25.rejecting-frame", Alternative: "relayed"},
	// AuthBridge's Outcome has no reason field.
	"outcome-without-reason": {Choice: "P29.outcome", Alternative: "no-reason"},
	// Reasonix checks only the Go type of the host's payload; its DTO's
	// Validate runs on replacements.
	"host-type-only": {Choice: "D2.host-check", Alternative: "type-only"},
	// Reasonix runs one sidecar runtime per plugin ID.
	"one-extension-per-id": {Choice: "D4.plugin-id", Alternative: "one"},
	// Reasonix's Result has the block reason, not who blocked.
	"blocker-unnamed": {Choice: "D7.blocked-by", Alternative: "reason-only"},
	// Reasonix's Result has the permission ruling, not who ruled.
	"decider-unnamed": {Choice: "D9.decided-by", Alternative: "ruling-only"},
	// Reasonix marshals the host's typed payload for its extensions.
	"re-encoded-payloads": {Choice: "D11.codec", Alternative: "re-encoded"},
	// Reasonix's tool: and provider: claims replace the tool or the
	// provider itself; they have no strategy phase.
	"specific-slots-replace-target": {Choice: "D19.specific-slots", Alternative: "replace-target"},
	// LIP's bus keeps what a fail-open hook changed before failing.
	"keep-failed-changes": {Choice: "H2.rollback", Alternative: "keep"},
	// LIP's bus ignores a reactor answer it cannot apply.
	"invalid-reactions-ignored": {Choice: "H6.invalid", Alternative: "ignored"},
	// Not a choice: a runtime whose build errors carry neither rule IDs
	// nor kinds (AuthBridge's are plain errors naming the plugin) must be
	// judged by the entries it refuses, and pass.
	"build-errors-without-rules": {},
}

// failFast keeps what a fail-fast build reports: the first error about an
// entry itself (a name or a config, P1/P6, in entry order) when there is
// one, since such a build stops there; otherwise every error, as the
// requires checks (P7/P8) are joined in any case.
func failFast(errs []*pipeline.RuleError) []*pipeline.RuleError {
	var first *pipeline.RuleError
	for _, e := range errs {
		if (e.Rule == "P1" || e.Rule == "P6") && (first == nil || e.Entry < first.Entry) {
			first = e
		}
	}
	if first != nil {
		return []*pipeline.RuleError{first}
	}
	return errs
}

// plainBuildMessage is a build error as a runtime without rule IDs words
// it: the plugin and what is wrong, no "P7" anywhere.
func plainBuildMessage(e *pipeline.RuleError) string {
	return regexp.MustCompile(`\bP[0-9]+\b:? ?`).ReplaceAllString(e.Error(), "")
}
