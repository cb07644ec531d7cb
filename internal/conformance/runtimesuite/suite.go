package runtimesuite

import "github.com/abkit/abkit/internal/conformance"

// Suite returns the runtime suite: every case a runtime owes, for families
// P, D and H. A case applies when the runtime hosts its family.
func Suite() *conformance.Registry {
	r := conformance.NewRegistry()
	addPipelineCases(r)
	addLifecycleChoiceCases(r)
	addInterceptCases(r)
	addHookCases(r)
	return r
}
