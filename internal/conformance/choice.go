package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Kind says what a case stands on: a rule the contract's source requires,
// or a choice, where the source allows several behaviours and abkit's
// reference picks one.
type Kind string

const (
	// KindRule: the source requires it; a failure is a fault.
	KindRule Kind = "rule"
	// KindChoice: abkit's reference takes one of several allowed
	// behaviours; a failure says only that the implementation took
	// another, unless it declared abkit's or the run is strict.
	KindChoice Kind = "choice"
)

// ChoicePoint is a place where the contract allows several behaviours
// (docs/contracts.md lists each under its rule).
type ChoicePoint struct {
	// ID names the choice: rule.topic, for example "P15.reject-status".
	ID string `json:"id"`
	// Rule is the rule the choice belongs to.
	Rule string `json:"rule"`
	// Summary says what is chosen.
	Summary string `json:"summary"`
	// Reference is the alternative abkit's reference takes.
	Reference string `json:"reference"`
	// Alternatives are every allowed behaviour, the reference's first.
	Alternatives []Alternative `json:"alternatives"`
	// Followed is set when checks inside rule cases follow the declared
	// alternative (T.Alternative) rather than being skipped.
	Followed bool `json:"followed,omitempty"`
}

// Alternative is one allowed behaviour at a choice point.
type Alternative struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

// Has reports whether name is one of the choice's alternatives.
func (c ChoicePoint) Has(name string) bool {
	return slices.ContainsFunc(c.Alternatives, func(a Alternative) bool { return a.Name == name })
}

// Names returns the alternatives' names, the reference's first.
func (c ChoicePoint) Names() []string {
	out := make([]string, len(c.Alternatives))
	for i, a := range c.Alternatives {
		out[i] = a.Name
	}
	return out
}

// ChoicePoints returns every choice point the suites know, in rule order.
// An implementation declares the alternative it takes at any of them
// (sdk.Plugin.Alternatives, DescribeRuntime's alternatives).
func ChoicePoints() []ChoicePoint {
	return slices.Concat(pipelineChoices(), dispatchChoices(), hooksChoices())
}

func alt(name, summary string) Alternative { return Alternative{Name: name, Summary: summary} }

// pipelineChoices are the choice points of family P.
func pipelineChoices() []ChoicePoint {
	return []ChoicePoint{
		{ID: "P1.names", Followed: true, Rule: "P1", Summary: "names in a chain: unique and non-empty, or repeated",
			Reference: "unique", Alternatives: []Alternative{
				alt("unique", "an empty or repeated name in a chain is a build error"),
				alt("repeated", "repeated names are allowed, the first counting for P7/P8; an empty name is reported as unknown (AuthBridge)"),
			}},
		{ID: "P6.build-errors", Rule: "P6", Summary: "how many build errors a failed build reports",
			Reference: "all", Alternatives: []Alternative{
				alt("all", "every error of every kind, joined"),
				alt("fail-fast", "an unknown name or a config error fails at once; only the P7/P8 errors are joined (AuthBridge)"),
			}},
		{ID: "P12.start-failure", Rule: "P12", Summary: "what Start does with the plugins it started when a later Init fails",
			Reference: "leave-to-stop", Alternatives: []Alternative{
				alt("leave-to-stop", "started plugins stay started; Stop shuts them down"),
				alt("stop-started", "Start shuts the started ones down in reverse before it returns; Stop does not repeat it (AuthBridge)"),
			}},
		{ID: "P13.overrun", Rule: "P13", Summary: "a Shutdown that overruns its deadline",
			Reference: "abandon", Alternatives: []Alternative{
				alt("abandon", "abandoned and reported; the rest still shut down"),
				alt("synchronous", "each is called in turn, trusting the deadline (AuthBridge)"),
			}},
		{ID: "P14.ready", Rule: "P14", Summary: "readiness under concurrent calls, and who is named",
			Reference: "concurrent-all", Alternatives: []Alternative{
				alt("concurrent-all", "safe under concurrent calls; every plugin not ready is named"),
				alt("first", "the first plugin not ready is named (AuthBridge)"),
			}},
		{ID: "P15.reject-status", Followed: true, Rule: "P15", Summary: "a rejection status outside 400–599",
			Reference: "remap-403", Alternatives: []Alternative{
				alt("remap-403", "replaced by 403, with a warning"),
				alt("as-given", "sent as the plugin gave it (AuthBridge)"),
			}},
		{ID: "P15.deny-wire", Followed: true, Rule: "P15", Summary: "what the client gets for a denial, an upstream failure and a hook panic",
			Reference: "text", Alternatives: []Alternative{
				alt("text", "the reason as text/plain; 502 for an upstream failure; a hook panic is a 500 error outcome"),
				alt("json", "a JSON error body; a panic is left to the HTTP server (AuthBridge)"),
			}},
		{ID: "P17.undeclared-write", Rule: "P17", Summary: "a body write by a plugin that does not declare it",
			Reference: "refused", Alternatives: []Alternative{
				alt("refused", "refused and reported; later plugins and the wire never see it"),
				alt("kept", "kept in memory for later plugins, unreported; never on the wire (AuthBridge)"),
			}},
		{ID: "P19.frame", Followed: true, Rule: "P19", Summary: "the bytes a frame holds",
			Reference: "raw-block", Alternatives: []Alternative{
				alt("raw-block", "the event's raw block, with its blank line"),
				alt("data-payload", "the event's data lines joined by LF (AuthBridge's sseframe reader)"),
			}},
		{ID: "P19.relay", Followed: true, Rule: "P19", Summary: "what the client gets of a streamed response",
			Reference: "upstream-bytes", Alternatives: []Alternative{
				alt("upstream-bytes", "every upstream byte, comment and field-only blocks included"),
				alt("reframed", "the stream re-framed to event: and data: lines (AuthBridge)"),
			}},
		{ID: "P22.timing", Followed: true, Rule: "P22", Summary: "when a streaming plugin gets a JSON response's one frame",
			Reference: "in-walk", Alternatives: []Alternative{
				alt("in-walk", "inside the reverse response walk, as that plugin's response hook"),
				alt("after-walk", "in a frame pass after the OnResponse walk (AuthBridge)"),
			}},
		{ID: "P25.rejecting-frame", Followed: true, Rule: "P25", Summary: "the frame a mid-stream rejection rejects",
			Reference: "withheld", Alternatives: []Alternative{
				alt("withheld", "the rejecting frame never reaches the client"),
				alt("relayed", "each frame is relayed before it is dispatched, so the client has it"),
			}},
		{ID: "P29.outcome", Followed: true, Rule: "P29", Summary: "what the outcome holds beyond kind, status, denier and duration",
			Reference: "reason", Alternatives: []Alternative{
				alt("reason", "a reason; absent during frames; a stream ended early or cut off is an error"),
				alt("no-reason", "no reason field (AuthBridge)"),
			}},
		{ID: "P30.overrun", Rule: "P30", Summary: "an OnFinish past its deadline",
			Reference: "abandon", Alternatives: []Alternative{
				alt("abandon", "abandoned past the deadline and a grace, and reported; the rest finish on a copy"),
				alt("synchronous", "finishers run one after the other under the deadline (AuthBridge)"),
			}},
	}
}

// dispatchChoices are the choice points of family D.
func dispatchChoices() []ChoicePoint {
	return []ChoicePoint{
		{ID: "D2.host-check", Followed: true, Rule: "D2", Summary: "what is checked of the host's own payload before the walk",
			Reference: "validate", Alternatives: []Alternative{
				alt("validate", "the point's DTO and its validity rules: an invalid host payload is a host error, no extension is asked"),
				alt("type-only", "the payload's type only; the validity rules apply to replacements (Reasonix: checkPayloadType, Validate in decodePayload)"),
			}},
		{ID: "D4.plugin-id", Rule: "D4", Summary: "extensions per plugin ID",
			Reference: "several", Alternatives: []Alternative{
				alt("several", "several extensions of one plugin ID, told apart by registration"),
				alt("one", "one extension per plugin ID (Reasonix: one runtime each)"),
			}},
		{ID: "D7.blocked-by", Followed: true, Rule: "D7", Summary: "what a blocked dispatch's result says besides the reason",
			Reference: "named", Alternatives: []Alternative{
				alt("named", "the extension that blocked is named (and the phase, walk or strategy)"),
				alt("reason-only", "the reason only (Reasonix: Result.Blocked, BlockReason)"),
			}},
		{ID: "D9.decided-by", Followed: true, Rule: "D9", Summary: "what a permission ruling says besides allow or deny",
			Reference: "named", Alternatives: []Alternative{
				alt("named", "the extension that ruled is named, with its reason"),
				alt("ruling-only", "the ruling only (Reasonix: Result.Permission)"),
			}},
		{ID: "D11.codec", Followed: true, Rule: "D11", Summary: "the bytes extensions get of the host's payload",
			Reference: "exact-bytes", Alternatives: []Alternative{
				alt("exact-bytes", "the host's own bytes, as the host passed them"),
				alt("re-encoded", "the host's typed value re-encoded, equal in value but not in bytes (Reasonix marshals its DTOs)"),
			}},
		{ID: "D13.warnings", Followed: true, Rule: "D13", Summary: "where an optional extension's failure is reported",
			Reference: "in-result", Alternatives: []Alternative{
				alt("in-result", "in the dispatch's result and to the host's warn callback"),
				alt("callback", "to the host's warn callback only (Reasonix)"),
			}},
		{ID: "D19.specific-slots", Rule: "D19", Summary: "what tool:<name> and provider: slot owners do",
			Reference: "rule-last", Alternatives: []Alternative{
				alt("rule-last", "they rule last at tool.* for their tool and provider.* for their provider, after the generic slots"),
				alt("replace-target", "a claim replaces the tool or provider itself; no strategy phase (Reasonix)"),
			}},
		{ID: "D20.notify", Rule: "D20", Summary: "a failing event delivery",
			Reference: "acknowledged", Alternatives: []Alternative{
				alt("acknowledged", "Notify answers; its errors and panics are warned once"),
				alt("fire-and-forget", "notifications without replies; only a failed enqueue is warned (Reasonix's JSON-RPC)"),
			}},
	}
}

// hooksChoices are the choice points of family H.
func hooksChoices() []ChoicePoint {
	return []ChoicePoint{
		{ID: "H2.rollback", Followed: true, Rule: "H2", Summary: "the value after a fail-open hook's error",
			Reference: "rollback", Alternatives: []Alternative{
				alt("rollback", "the chain resumes with the value from before that hook"),
				alt("keep", "what the hook changed before failing is kept (LIP)"),
			}},
		{ID: "H6.invalid", Followed: true, Rule: "H6", Summary: "an invalid rewrite or replace from a tool reactor",
			Reference: "policy", Alternatives: []Alternative{
				alt("policy", "handled by the bus's error policy (swallow drops it)"),
				alt("ignored", "ignored; the chain goes on with the current event (LIP)"),
			}},
	}
}

// ChoicePointByID returns the choice point with the given ID.
func ChoicePointByID(id string) (ChoicePoint, bool) {
	for _, c := range ChoicePoints() {
		if c.ID == id {
			return c, true
		}
	}
	return ChoicePoint{}, false
}

// CheckAlternatives reports the declared alternatives that name no known
// choice point or alternative, one line each, sorted; a run lists them as
// notes and judges those choices as undeclared.
func CheckAlternatives(decl map[string]string) []string {
	var out []string
	for id, a := range decl {
		cp, ok := ChoicePointByID(id)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("declared alternative for unknown choice %q (known: %s); judged as undeclared", id, strings.Join(choiceIDs(), ", ")))
		case !cp.Has(a):
			out = append(out, fmt.Sprintf("declared alternative %q for choice %s is not one of %s; judged as undeclared", a, id, strings.Join(cp.Names(), ", ")))
		}
	}
	sort.Strings(out)
	return out
}

func choiceIDs() []string {
	var ids []string
	for _, c := range ChoicePoints() {
		ids = append(ids, c.ID)
	}
	return ids
}

// Judgement is how a run treats one case, given what the implementation
// declares.
type Judgement struct {
	Kind Kind
	// Counted: a failure fails the run.
	Counted bool
	// Skip, when set, is why the case does not run.
	Skip string
	// Declared is the alternative the implementation declared, if any.
	Declared string
}

// Judge decides how case c is treated for an implementation declaring
// decl. A rule case always counts. A choice case checks one alternative
// (the reference's unless the case says otherwise):
//   - strict: only checks of the reference alternative run, and count;
//   - declared and the same alternative: it runs and counts, as a rule;
//   - declared another: skipped, with the reason;
//   - undeclared: a check of the reference runs and a failure is reported
//     as a difference, not a fault; a check of another alternative is
//     skipped.
func Judge(c *Case, decl map[string]string, strict bool) Judgement {
	if c.Choice == "" {
		return Judgement{Kind: KindRule, Counted: true}
	}
	cp, _ := ChoicePointByID(c.Choice) // Registry.Add checked it
	checks := c.checks(cp)
	j := Judgement{Kind: KindChoice}
	d, declared := decl[c.Choice]
	if declared && cp.Has(d) {
		j.Declared = d
	} else {
		declared = false
	}
	switch {
	case strict && checks == cp.Reference:
		j.Counted = true
	case strict:
		j.Skip = fmt.Sprintf("checks alternative %q of choice %s; --strict judges abkit's (%s)", checks, c.Choice, cp.Reference)
	case declared && d == checks:
		j.Counted = true
	case declared:
		j.Skip = fmt.Sprintf("declares alternative %q of choice %s; this case checks %q", d, c.Choice, checks)
	case checks != cp.Reference:
		j.Skip = fmt.Sprintf("checks alternative %q of choice %s, which is not declared", checks, c.Choice)
	}
	return j
}

// checks is the alternative the case checks.
func (c *Case) checks(cp ChoicePoint) string {
	if c.Alternative != "" {
		return c.Alternative
	}
	return cp.Reference
}

// Kind is the case's kind.
func (c *Case) Kind() Kind {
	if c.Choice != "" {
		return KindChoice
	}
	return KindRule
}
