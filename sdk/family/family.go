// Package family names the three contract families, once for every package
// that says which families a plugin serves (docs/contracts.md has the key):
//
//   - P, pipeline: the request pipeline of a gateway (package sdk/gateway,
//     run by internal/pipeline).
//   - D, dispatch: agent extensions claiming slots at extension points
//     (package sdk/intercept, run by internal/dispatch).
//   - H, hooks: the agent's hook bus (package sdk/hooks, run by
//     internal/hookbus).
package family

// The families, as Describe, catalogs and traces write them.
const (
	Pipeline = "P"
	Dispatch = "D"
	Hooks    = "H"
)

// Of lists the families a plugin serves, given which of their parts it
// has (a pipeline factory, a dispatch extension, hooks), in P, D, H order;
// nil for none.
func Of(pipeline, dispatch, hooks bool) []string {
	var f []string
	for _, x := range []struct {
		has  bool
		name string
	}{{pipeline, Pipeline}, {dispatch, Dispatch}, {hooks, Hooks}} {
		if x.has {
			f = append(f, x.name)
		}
	}
	return f
}
