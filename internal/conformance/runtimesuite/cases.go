package runtimesuite

import (
	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/sdk/family"
)

// Each cases_<family>_<group>.go file registers one rule group's cases: a
// table of cases, each naming the function that runs it (parameterised
// cases are made by a function of their parameters in a loop).

// Suite returns the runtime suite: every case a runtime owes, for families
// P, D and H. A case applies when the runtime hosts its family.
func Suite() *conformance.Registry {
	r := conformance.NewRegistry()
	for _, add := range []func(*conformance.Registry){
		addPipelineClientCases, addPipelineHeaderCases, addPipelineOrderCases, addPipelineStreamCases,
		addPipelineFinishCases, addDeadlineAxisCases, addPipelineBodyCases, addPipelineLifecycleCases, addLifecycleChoiceCases, addPipelineBuildCases,
		addDispatchSlotCases, addDispatchOrderCases, addDispatchWarningCases, addDispatchDecisionCases,
		addDispatchPointCases, addDispatchEventCases,
		addHooksSubmitCases, addHooksOrderCases, addHooksToolCases,
	} {
		add(r)
	}
	return r
}

func needP(d *conformance.Reported) string {
	if !d.Has(family.Pipeline) {
		return "the runtime does not host family P"
	}
	return ""
}

func pcase(id string, rules []string, summary, explain string, run func(t *conformance.T)) *conformance.Case {
	return &conformance.Case{ID: id, Rules: rules, Summary: summary, Explain: explain, Applies: needP, Run: run}
}

// choice makes c a check of choice point id (its reference alternative,
// or alt when given): see conformance.Judge.
func choice(id string, c *conformance.Case, alt ...string) *conformance.Case {
	c.Choice = id
	if len(alt) > 0 {
		c.Alternative = alt[0]
	}
	return c
}

// dcase is a case of family D.
func dcase(id string, rules []string, summary, explain string, run func(t *conformance.T)) *conformance.Case {
	return &conformance.Case{ID: id, Rules: rules, Summary: summary, Explain: explain, Applies: needFam("D"), Run: run}
}

// hcase is a case of family H.
func hcase(id string, rules []string, summary, explain string, run func(t *conformance.T)) *conformance.Case {
	return &conformance.Case{ID: id, Rules: rules, Summary: summary, Explain: explain, Applies: needFam("H"), Run: run}
}

func needFam(f string) func(*conformance.Reported) string {
	return func(d *conformance.Reported) string {
		if !d.Has(f) {
			return "the runtime does not host family " + f
		}
		return ""
	}
}
