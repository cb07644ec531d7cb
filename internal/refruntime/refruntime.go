// Package refruntime is abkit's reference runtime for the runtime
// conformance suite: it serves the Runtime service of
// proto/abkit/v1/runtime.proto over hashicorp/go-plugin and runs each
// scenario on abkit's own runtimes (internal/pipeline, internal/dispatch,
// internal/hookbus), with the scenario's probes, served by the runner on
// go-plugin's broker, as plugins, extensions and hooks.
//
// Options.Bug turns the reference into a deliberately broken runtime for
// the suite's self-test; each bug breaks exactly one rule.
package refruntime

import (
	"fmt"
	"os"
	"sync"

	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/runtimekit"
)

// Bug names one deliberate defect (see Bugs).
type Bug string

// Bugs lists every defect Options.Bug can inject, with the rule it breaks.
var Bugs = map[Bug]string{
	"fifo-finish":                   "P27",
	"response-forward":              "P16",
	"no-last-on-empty":              "P21",
	"finish-ctx-from-req":           "P28",
	"response-for-streamers":        "P23",
	"first-build-error-only":        "P6",
	"second-writer-accepted":        "P9",
	"allow-outside-perm":            "D9",
	"optional-fatal":                "D13",
	"warn-twice":                    "D15",
	"second-owner-accepted":         "D18",
	"no-strategy":                   "D19",
	"unspecified-fail-open":         "H3",
	"swallow-continues":             "H5",
	"frames-declaration-order":      "P20",
	"frame-overtakes":               "P20",
	"denier-not-finished":           "P26",
	"last-twice":                    "P21",
	"unknown-field-accepted":        "D8",
	"allow-honoured-at-tool-before": "D9",
	"duplicate-names-accepted":      "P1",
	"header-changes-lost":           "P32",
	"identity-leaks":                "P36",
}

// Options configure the runtime.
type Options struct {
	// Bug, when set, breaks one rule on purpose.
	Bug Bug
	// Name is reported by DescribeRuntime; empty means "abkit-reference".
	Name string
	// Alt, when set, makes the runtime take another allowed behaviour
	// at one choice point (see Alts); Declare says whether
	// DescribeRuntime declares it.
	Alt     Alt
	Declare bool
}

// Main serves the runtime over go-plugin and does not return.
func Main(opts Options) {
	if opts.Bug != "" {
		if _, ok := Bugs[opts.Bug]; !ok {
			fmt.Fprintf(os.Stderr, "abkit-runtime: unknown bug %q\n", opts.Bug)
			os.Exit(2)
		}
	}
	if opts.Alt != "" {
		if _, ok := Alts[opts.Alt]; !ok {
			fmt.Fprintf(os.Stderr, "abkit-runtime: unknown alternative %q\n", opts.Alt)
			os.Exit(2)
		}
	}
	runtimekit.Serve(Runtime(opts))
}

// Runtime returns the reference runtime (with opts' bug or alternative) as
// the kit serves it.
func Runtime(opts Options) runtimekit.Runtime {
	s := &Server{opts: opts}
	name := opts.Name
	if name == "" {
		name = "abkit-reference"
		switch {
		case opts.Bug != "":
			name = "abkit-broken-" + string(opts.Bug)
		case opts.Alt != "":
			name = "abkit-alt-" + string(opts.Alt)
		}
	}
	rt := runtimekit.Runtime{Name: name, Version: "v1", Pipeline: s.runPipeline, Intercept: s.runIntercept, Hooks: s.runHooks}
	if opts.Alt != "" && opts.Declare {
		a := Alts[opts.Alt]
		rt.Alternatives = map[string]string{a.Choice: a.Alternative}
	}
	return rt
}

// Server runs the scenarios of each family on abkit's runtimes.
type Server struct {
	opts Options

	mu sync.Mutex
	// lastID is the identity of the last exchange, kept only by the
	// identity-leaks bug.
	lastID *gateway.Identity
}
