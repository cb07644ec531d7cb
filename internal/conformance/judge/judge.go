// Package judge runs a conformance suite against one binary under test:
// a faulty plugin or runtime of the contract-fault corpus
// (internal/conformance/faults) or a mutant (internal/conformance/mutation).
// Both judge a binary that is meant to be wrong by the suite of its kind;
// what counts as a kill is theirs, how the suite is set up and run is here.
package judge

import (
	"context"
	"regexp"
	"slices"
	"sync"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/runtimesuite"
	"github.com/abkit/abkit/internal/pluginhost"
)

// The suites a binary is judged by.
const (
	SuitePlugin  = "plugin"
	SuiteRuntime = "runtime"
)

// Target is a binary and the suite that judges it.
type Target struct {
	// Suite is SuitePlugin or SuiteRuntime.
	Suite string
	// Path is the binary.
	Path string
	// Args are a plugin binary's arguments (the corpus binary picks its
	// fault by the first).
	Args []string
	// Examples, for a plugin, is a behaviour-examples file whose cases
	// join the suite; empty: the contract cases alone.
	Examples string
}

// Launch returns the suite that judges t and the launcher that starts it.
func (t Target) Launch() (*conformance.Registry, conformance.Launcher, error) {
	if t.Suite == SuiteRuntime {
		return runtimesuite.Suite(), runtimesuite.Launcher{Path: t.Path}, nil
	}
	reg := conformance.PluginSuite()
	if t.Examples != "" {
		f, err := conformance.LoadExamples(t.Examples)
		if err != nil {
			return nil, nil, err
		}
		cs, err := conformance.ExampleCases(f, false, nil)
		if err != nil {
			return nil, nil, err
		}
		reg.Add(cs...)
	}
	return reg, conformance.Binary(t.Path, pluginhost.Options{Args: t.Args}), nil
}

// Run runs t's suite against it with o.
func (t Target) Run(ctx context.Context, o conformance.Options) (*conformance.Report, error) {
	reg, l, err := t.Launch()
	if err != nil {
		return nil, err
	}
	return conformance.Run(ctx, reg, l, o)
}

// FirstBad runs t's suite with o until a case ends badly and returns that
// case (empty when every case passed); an error means the binary could not
// be started. One failure is enough: the rest of the run is cancelled.
func (t Target) FirstBad(ctx context.Context, o conformance.Options) (string, error) {
	reg, l, err := t.Launch()
	if err != nil {
		return "", err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first string
	var once sync.Once
	o.OnResult = func(r conformance.CaseResult) {
		if r.Status.Bad() {
			once.Do(func() { first = r.ID; cancel() })
		}
	}
	if _, err := conformance.Run(rctx, reg, l, o); err != nil {
		return "", err
	}
	return first, ctx.Err()
}

// Exactly matches the case ID id and no other.
func Exactly(id string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(id) + "$")
}

// Citing matches the IDs of reg's cases that cite rule; when none does,
// a pattern that matches nothing, so that nothing runs.
func Citing(reg *conformance.Registry, rule string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, c := range reg.Cases() {
		if slices.Contains(c.Rules, rule) {
			out = append(out, Exactly(c.ID))
		}
	}
	if len(out) == 0 {
		out = append(out, regexp.MustCompile(`^\b$`))
	}
	return out
}

// Each calls job(i) for every i below n, at most par at once, and returns
// when all have.
func Each(n, par int, job func(i int)) {
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			job(i)
		}()
	}
	wg.Wait()
}

// Group is the items of one group (a role, a suite).
type Group[T any] struct {
	Name  string
	Items []T
}

// ByGroup sorts items into the groups order names, by key, keeping their
// order within a group; groups with no item are left out, as are items
// whose key is not in order.
func ByGroup[T any](order []string, items []T, key func(T) string) []Group[T] {
	var out []Group[T]
	for _, name := range order {
		g := Group[T]{Name: name}
		for _, it := range items {
			if key(it) == name {
				g.Items = append(g.Items, it)
			}
		}
		if len(g.Items) > 0 {
			out = append(out, g)
		}
	}
	return out
}
