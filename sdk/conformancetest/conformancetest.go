// Package conformancetest runs abkit's plugin conformance suite from a plugin
// author's own `go test`, in the manner of go-plugin's testing.go: the
// plugin is served in-process, abkit's reference runtimes play the host, and
// every case of the suite becomes a subtest named by its case ID.
//
// In-process the suite checks one rule that a plugin process cannot be
// caught breaking: [P24], borrowed bytes. After each OnResponseFrame call the
// host overwrites the frame's buffer, so a plugin that kept a reference to
// it (instead of copying) sees garbage and fails
// P24/borrowed-bytes/poisoned-frames.
//
// A case that does not apply to the plugin (another family, an optional
// behaviour it does not implement) is skipped with the reason. A failing
// case reports the rules it checks, what was expected against what was
// observed, as a go-cmp diff (-want +got), and how to fix it
// (`conformance explain CASE` prints the same).
//
// A complete test, next to the plugin:
//
//	package guardrail_test
//
//	import (
//		"testing"
//
//		"github.com/abkit/abkit/examples/plugins/guardrail"
//		"github.com/abkit/abkit/sdk/conformancetest"
//	)
//
//	func TestConformance(t *testing.T) {
//		conformancetest.Run(t, guardrail.Plugin(),
//			conformancetest.Skip(`^D`),                             // like --skip
//			conformancetest.KnownFailing("P28/finish/within-deadline"), // like --known-failing
//		)
//	}
//
// `go test -run 'TestConformance/P21'` runs only the P21 cases, and
// `go test -v` lists every case with its rules. The same suite runs against
// the built binary with `conformance run --plugin BIN` (docs/conformance.md).
//
// [P24]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package conformancetest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/sdk"
)

// Option tunes Run.
type Option func(*config) error

type config struct {
	run, skip []*regexp.Regexp
	known     []string
	timeout   time.Duration
	examples  []string
}

// Examples also runs the plugin's behaviour examples in each file (the
// command's --examples): every example is a subtest "examples/NAME" that
// compares what the plugin answered with the golden file beside the
// examples (NAME.golden.json for NAME.yaml). Record or refresh the golden
// file with `conformance run --plugin BIN --examples FILE
// --update-examples`, against the built binary: the examples describe what
// a host sees across the process boundary. docs/conformance.md, "Behaviour
// examples", gives the format.
func Examples(files ...string) Option {
	return func(c *config) error {
		c.examples = append(c.examples, files...)
		return nil
	}
}

// Only keeps the cases whose ID matches one of the regular expressions
// (the command's --run). Without it every case runs.
func Only(patterns ...string) Option {
	return func(c *config) error { return patternsInto("Only", &c.run, patterns) }
}

// Skip drops the cases whose ID matches one of the regular expressions (the
// command's --skip). They do not appear as subtests.
func Skip(patterns ...string) Option {
	return func(c *config) error { return patternsInto("Skip", &c.skip, patterns) }
}

func patternsInto(name string, dst *[]*regexp.Regexp, pats []string) error {
	for _, p := range pats {
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("conformancetest.%s(%q): %w", name, p, err)
		}
		*dst = append(*dst, re)
	}
	return nil
}

// KnownFailing lists cases expected to fail, as baseline patterns (the
// command's --known-failing): a case ID, or a pattern with * (one part of
// an ID) or ** (any number of parts). A listed case that fails is logged
// and passes; a listed case that passes fails the test, because the entry
// is stale and should be removed.
func KnownFailing(patterns ...string) Option {
	return func(c *config) error {
		c.known = append(c.known, patterns...)
		return nil
	}
}

// Timeout bounds each case (default conformance's 10 s). A case that
// overruns it fails; in-process the hung call cannot be stopped, so its
// goroutine is abandoned.
func Timeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("conformancetest.Timeout(%v): want a positive duration", d)
		}
		c.timeout = d
		return nil
	}
}

// Run runs the plugin suite against p in-process, one parallel subtest per
// case (t.Run with the case ID). Frames are poisoned after each call (P24).
// Run fails t at once if an option is invalid or p cannot be described.
func Run(t *testing.T, p sdk.Plugin, opts ...Option) {
	t.Helper()
	run(tRunner{t}, p, opts...)
}

// tb is the part of *testing.T that run uses; tests of this package drive
// run through it as well as through a real *testing.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
	Parallel()
	Run(name string, f func(tb)) bool
}

type tRunner struct{ *testing.T }

func (r tRunner) Run(name string, f func(tb)) bool {
	return r.T.Run(name, func(t *testing.T) { f(tRunner{t}) })
}

func run(t tb, p sdk.Plugin, opts ...Option) {
	t.Helper()
	var c config
	for _, o := range opts {
		if err := o(&c); err != nil {
			t.Fatalf("%v", err)
		}
	}
	known, err := conformance.ParseBaselinePatterns(c.known)
	if err != nil {
		t.Fatalf("conformancetest.KnownFailing: %v", err)
	}
	reg := conformance.PluginSuite()
	for _, path := range c.examples {
		f, err := conformance.LoadExamples(path)
		if err != nil {
			t.Fatalf("conformancetest.Examples: %v", err)
		}
		cs, err := conformance.ExampleCases(f, false, nil)
		if err != nil {
			t.Fatalf("conformancetest.Examples: %v", err)
		}
		reg.Add(cs...)
	}
	cases := conformance.Select(reg, c.run, c.skip)
	if len(cases) == 0 {
		t.Fatalf("conformancetest: the Only and Skip patterns leave no case; `conformance list` prints the case IDs")
	}
	launcher := conformance.InProcess(p)
	for _, cs := range cases {
		t.Run(cs.ID, func(t tb) {
			t.Parallel()
			exact := regexp.MustCompile("^" + regexp.QuoteMeta(cs.ID) + "$")
			rep, err := conformance.Run(context.Background(), reg, launcher, conformance.Options{
				Parallel: 1, Timeout: c.timeout, Run: []*regexp.Regexp{exact},
				KnownFailing: known, PoisonFrames: true,
			})
			if err != nil {
				t.Fatalf("plugin %q could not be served in-process: %v", p.Name, err)
			}
			if len(rep.Results) != 1 {
				t.Fatalf("conformancetest: case %s gave %d results, want 1", cs.ID, len(rep.Results))
			}
			report(t, cs, rep.Results[0])
		})
	}
}

func report(t tb, cs *conformance.Case, r conformance.CaseResult) {
	t.Helper()
	rules := strings.Join(r.Rules, ", ")
	switch r.Status {
	case conformance.StatusSkip:
		t.Skipf("%s (rules %s)", r.Reason, rules)
	case conformance.StatusPass, conformance.StatusFlaky:
		t.Logf("rules %s: %s", rules, r.Summary)
	case conformance.StatusKnownFailing:
		t.Logf("known failing (rules %s):\n%s", rules, failures(r))
	case conformance.StatusFixed:
		t.Errorf("%s is listed in KnownFailing but passed: remove the entry (rules %s)", r.ID, rules)
	default:
		var b strings.Builder
		fmt.Fprintf(&b, "%s fails (rules %s): %s\n%s", r.ID, rules, r.Summary, failures(r))
		for _, l := range r.Log {
			fmt.Fprintf(&b, "\n  log: %s", l)
		}
		fmt.Fprintf(&b, "\n\nWhat it checks and how to fix it:\n  %s", strings.ReplaceAll(strings.TrimSpace(cs.Explain), "\n", "\n  "))
		t.Errorf("%s", b.String())
	}
}

func failures(r conformance.CaseResult) string {
	var b strings.Builder
	for _, f := range r.Failures {
		if f.Rule == "" && strings.HasPrefix(f.Message, "fixed:") {
			continue
		}
		fmt.Fprintf(&b, "  %s: %s", f.Rule, strings.ReplaceAll(f.Message, "\n", "\n    "))
		if f.Diff != "" {
			fmt.Fprintf(&b, "\n    %s", strings.ReplaceAll(f.Diff, "\n", "\n    "))
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
