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
