package conformance

import (
	"slices"
	"sort"
	"strconv"
)

// RuleCoverage is one row of `conformance list --rules`: a contract rule,
// the cases that check it, or why none can.
type RuleCoverage struct {
	Rule   string   `json:"rule"`
	Cases  []string `json:"cases,omitempty"`
	Reason string   `json:"reason,omitempty"`
	// Choices are the rule's choice points, each alternative with the
	// cases that check it.
	Choices []ChoiceCoverage `json:"choices,omitempty"`
}

// ChoiceCoverage is one choice point of a rule in the coverage table.
type ChoiceCoverage struct {
	ChoicePoint
	// Cases maps an alternative to the cases that check it; an
	// alternative without cases is skipped by the suite when declared.
	Cases map[string][]string `json:"cases,omitempty"`
}

// uncheckable says, for every rule no plugin-suite case checks, why it
// cannot be checked from outside the plugin process: most are owed by the
// host (the reference runtimes have their own tests), a few are promises
// about code paths a black-box host cannot observe.
var uncheckable = map[string]string{
	"P4":  "owed by the host: it normalises capabilities before reading them (internal/pipeline tests)",
	"P6":  "chain building is the host's; the suite only checks an instance can be made (P6/instance/default-config)",
	"P7":  "chain building is the host's: requires order (catalog lint, pipeline tests)",
	"P8":  "chain building is the host's: requires_any order",
	"P9":  "chain building is the host's: one writer per direction",
	"P10": "chain building is the host's: waypoint mode",
	"P11": "owed by the host: whether bodies are buffered",
	"P18": "owed by the host: the streaming predicate",
	"P23": "owed by the host: which path (frames or OnResponse) a plugin gets",
	"P25": "owed by the host: what a mid-stream reject does to the stream",
	"P27": "owed by the host: finish order",
	"P29": "owed by the host: when the outcome is available",
	"P35": "given by the host: the suite's exchanges carry a scheme, a host, a path, a query and a client address (rig.run), and what a plugin reads of them is its own business",
	"D2":  "payload validity is the host's (wrong payloads are host errors); replacements are checked under D8",
	"D4":  "chain order is the host's; the manifest's priority range is checked under D1/manifest/valid",
	"D10": "owed by the host: the host verdict at permission.decision",
	"D11": "owed by the host: adoption of unchanged payloads",
	"D12": "owed by the host: required-class failure policy",
	"D14": "owed by the host: treating violations as failures (the violations themselves are D8/D9 cases)",
	"D15": "owed by the host: warn-once",
	"D16": "owed by the host: redaction of what leaves the dispatcher",
	"D18": "single owner is a property of a set of plugins, checked when a chain is built (catalog lint, dispatch tests)",
	"H6":  "owed by the host: the bus's tool error policy (invalid decisions are H5 cases)",
}

// allRules are the rule IDs of docs/contracts.md.
func allRules() []string {
	return slices.Concat(ruleIDs("P", 36), ruleIDs("D", 20), ruleIDs("H", 6))
}

// ruleIDs are family's rule IDs 1 to n: P1, P2, … Pn.
func ruleIDs(family string, n int) []string {
	out := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, family+strconv.Itoa(i))
	}
	return out
}

// Coverage returns, for every rule of the contracts, the cases of the plugin
// suite reg that check it, or the reason none can. A rule with neither is a
// gap (its Reason says so); the package tests keep that list empty.
func Coverage(reg *Registry) []RuleCoverage { return CoverageWith(reg, uncheckable) }

// CoverageWith is Coverage with a suite's own reasons for the rules none of
// its cases check (the runtime suite owes different rules than the plugin
// suite, so it states its own).
func CoverageWith(reg *Registry, reasons map[string]string) []RuleCoverage {
	by := map[string][]string{}
	byChoice := map[string]map[string][]string{}
	for _, c := range reg.Cases() {
		for _, r := range c.Rules {
			by[r] = append(by[r], c.ID)
		}
		if c.Choice != "" {
			cp, _ := ChoicePointByID(c.Choice)
			if byChoice[c.Choice] == nil {
				byChoice[c.Choice] = map[string][]string{}
			}
			byChoice[c.Choice][c.checks(cp)] = append(byChoice[c.Choice][c.checks(cp)], c.ID)
		}
	}
	choices := map[string][]ChoiceCoverage{}
	for _, cp := range ChoicePoints() {
		if byChoice[cp.ID] != nil || cp.Followed {
			choices[cp.Rule] = append(choices[cp.Rule], ChoiceCoverage{ChoicePoint: cp, Cases: byChoice[cp.ID]})
		}
	}
	var out []RuleCoverage
	for _, r := range allRules() {
		rc := RuleCoverage{Rule: r, Cases: by[r], Choices: choices[r]}
		if len(rc.Cases) == 0 {
			rc.Reason = reasons[r]
			if rc.Reason == "" {
				rc.Reason = "GAP: no case and no stated reason"
			}
		}
		sort.Strings(rc.Cases)
		out = append(out, rc)
	}
	return out
}
