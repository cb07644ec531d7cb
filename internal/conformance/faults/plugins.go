// Package faults is the contract-fault corpus: faulty plugins and
// runtimes, each a plausible bug (a one-line story of how it came about)
// that breaks one contract rule and is otherwise well behaved. The suites
// must kill each one with a case citing that rule; `make mutate` reports
// the kill rate on the corpus apart from the syntactic mutants, and
// TestFaultCorpus (CI) holds it.
//
// They are written for the corpus, apart from the suites' own broken
// plugins (package broken) and runtimes (refruntime.Bugs), which test the
// suites' wording and attribution: a fault here is a bug someone would
// write, not a switch the suite was built around.
//
// testdata/faults/faulty-plugin serves the plugins and
// testdata/faults/faulty-runtime the runtimes, each picking its fault by its first argument (or the name
// it is linked as).
package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/conformance/passthrough"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// Fault is one faulty implementation.
type Fault struct {
	// Name picks it (the binary's first argument).
	Name string `json:"name"`
	// Rule is the one contract rule it breaks.
	Rule string `json:"rule"`
	// Story is how the bug came about, in one line.
	Story string `json:"story"`
	// InProcess: the fault is observable only when the suite runs the
	// plugin in-process (borrowed frame bytes, P24: across the protocol
	// every frame is a fresh message).
	InProcess bool `json:"in_process,omitempty"`
	// Miss, when set, says why the suite is known not to kill the fault;
	// the corpus test then expects it to survive and reports it.
	Miss string `json:"miss,omitempty"`
}

// PluginFault is a faulty plugin.
type PluginFault struct {
	Fault
	Plugin func() sdk.Plugin `json:"-"`
}

// Plugins lists the faulty plugins, one or more per rule a plugin can
// break (P, X, D and H), sorted by name.
func Plugins() []PluginFault { return sorted(pluginFaults()) }

// PluginByName returns the faulty plugin called name.
func PluginByName(name string) (PluginFault, bool) { return byName(pluginFaults(), name) }

// Main is the main of a corpus binary (testdata/faults) of kind, plugin
// or runtime: it serves the fault args[1] names or, without it, the one
// named as the binary is linked, args[0] (a runtime's less "runtime-"). A
// name of no fault exits with status 2.
func Main(args []string, kind string) {
	name := strings.TrimSuffix(filepath.Base(args[0]), ".exe")
	if kind == "runtime" {
		name = strings.TrimPrefix(name, "runtime-")
	}
	if len(args) > 1 {
		name = args[1]
	}
	if kind == "runtime" {
		if f, ok := RuntimeByName(name); ok {
			f.Serve()
			return
		}
	} else if f, ok := PluginByName(name); ok {
		sdk.Serve(f.Plugin())
		return
	}
	fmt.Fprintf(os.Stderr, "faults: no faulty %s named %q (see internal/conformance/faults)\n", kind, name)
	os.Exit(2)
}

// faultName is the name of the fault f is, a PluginFault or a RuntimeFault.
func (f Fault) faultName() string { return f.Name }

// sorted leaves the control out of fs and sorts the rest by name.
func sorted[F interface{ faultName() string }](fs []F) []F {
	out := slices.DeleteFunc(fs, func(f F) bool { return f.faultName() == ControlName })
	sort.Slice(out, func(i, j int) bool { return out[i].faultName() < out[j].faultName() })
	return out
}

// byName returns the fault of fs called name.
func byName[F interface{ faultName() string }](fs []F, name string) (F, bool) {
	for _, f := range fs {
		if f.faultName() == name {
			return f, true
		}
	}
	var none F
	return none, false
}

func pf(name, rule, story string, p func() sdk.Plugin) PluginFault {
	return PluginFault{Fault: Fault{Name: name, Rule: rule, Story: story}, Plugin: p}
}

func pluginFaults() []PluginFault {
	var fs []PluginFault
	for _, g := range [][]PluginFault{pChainPluginFaults(), pStreamPluginFaults(), dPluginFaults(), hPluginFaults()} {
		fs = append(fs, g...)
	}
	return fs
}

// inProcess marks a fault observable only in-process.
func inProcess(f PluginFault) PluginFault { f.InProcess = true; return f }

// pChainPluginFaults lists the faulty plugins of the control and P1-P17: identity, chains, lifecycle, requests and bodies.
func pChainPluginFaults() []PluginFault {
	return []PluginFault{
		// The control: the building blocks with no fault, streaming and
		// finishing. It must pass the plugin suite.
		pf(ControlName, "", "", func() sdk.Plugin {
			return simple(ControlName, caps("Passes everything on"), controlHooks{})
		}),
		pf("p-instance-name-stale", "P1", "the package was renamed to rate-limiter; the instance's Name() still returns the old constant \"ratelimit\"", func() sdk.Plugin {
			return pipeNamed("p-instance-name-stale", "ratelimit", func(json.RawMessage) gateway.Plugin {
				return quiet{ID: "ratelimit", Caps: caps("Limits requests per client")}
			})
		}),
		pf("p-caps-follow-config", "P2", "reads_body is set only when the redact_bodies option is on, to save a copy when it is off", func() sdk.Plugin {
			f := factory("p-caps-follow-config", func(cfg json.RawMessage) gateway.Plugin {
				var c struct {
					RedactBodies bool `json:"redact_bodies"`
				}
				_ = json.Unmarshal(cfg, &c)
				return quiet{ID: "p-caps-follow-config", Caps: gateway.Capabilities{ReadsBody: c.RedactBodies, Description: "Redacts secrets from logs"}}
			})
			f.Config = &gateway.ConfigSchema{Fields: []gateway.Field{
				{Name: "redact_bodies", Type: "boolean", Default: false, Description: "Also redact request bodies"},
				{Name: "mode", Type: "string", Enum: []string{"mask", "drop"}, Default: "mask", Description: "How secrets are removed"},
			}}
			return plugin(f)
		}),
		pf("p-requires-self", "P3", "copied the requires list from the plugin it was forked from, which named this one", func() sdk.Plugin {
			return simple("p-requires-self", gateway.Capabilities{Requires: []string{"p-requires-self"}, Description: "Enriches inference metadata"}, quietHooks{})
		}),
		pf("p-description-newline", "P5", "the capability description comes from a heredoc and keeps its trailing newline", func() sdk.Plugin {
			return simple("p-description-newline", gateway.Capabilities{Description: "Tags requests with a tenant\n"}, quietHooks{})
		}),
		pf("p-needs-unlisted-key", "P6", "the factory demands an api_key that the schema never lists, so no default or sample config satisfies it", func() sdk.Plugin {
			f := gateway.Factory{Name: "p-needs-unlisted-key", New: func(cfg json.RawMessage) (gateway.Plugin, error) {
				var c map[string]any
				_ = json.Unmarshal(cfg, &c)
				if _, ok := c["api_key"]; !ok {
					return nil, errors.New("api_key is required")
				}
				return quiet{ID: "p-needs-unlisted-key", Caps: caps("Calls a moderation API")}, nil
			}, Config: &gateway.ConfigSchema{Fields: []gateway.Field{{Name: "endpoint", Type: "string", Default: "https://moderation.example", Description: "API endpoint"}}}}
			return plugin(f)
		}),
		pf("p-init-dials-metrics", "P12", "Init dials a metrics endpoint that only exists in production and returns the dial error", func() sdk.Plugin {
			return simple("p-init-dials-metrics", caps("Exports request metrics"), withInit{err: errors.New("dial tcp 10.0.0.7:9125: connect: connection refused")})
		}),
		pf("p-shutdown-double-close", "P13", "Shutdown closes the log file a second time and returns the \"file already closed\" error", func() sdk.Plugin {
			return simple("p-shutdown-double-close", caps("Writes an access log"), withShutdown{})
		}),
		pf("p-ready-pings-upstream", "P14", "Ready pings the upstream's health endpoint (300 ms away) instead of reading a flag", func() sdk.Plugin {
			return simple("p-ready-pings-upstream", caps("Routes to a healthy upstream"), slowReady{})
		}),
		pf("p-ready-before-init", "P14", "Ready reads the connection pool Init creates; asked before Init, it dereferences nil", func() sdk.Plugin {
			return pipeNamed("p-ready-before-init", "p-ready-before-init", func(json.RawMessage) gateway.Plugin {
				return &poolReady{quiet: quiet{ID: "p-ready-before-init", Caps: caps("Pools upstream connections")}}
			})
		}),
		pf("p-get-has-no-body", "P15", "OnRequest decodes the JSON body of every request; a GET has none and the nil map is indexed", func() sdk.Plugin {
			return simple("p-get-has-no-body", gateway.Capabilities{ReadsBody: true, Description: "Checks the model name"}, bodyModel{})
		}),
		pf("p-response-json-only", "P16", "OnResponse assumes every upstream answers JSON; a text/plain health check panics the type assertion", func() sdk.Plugin {
			return simple("p-response-json-only", gateway.Capabilities{ReadsBody: true, Description: "Counts completion tokens"}, respJSON{})
		}),
		pf("p-request-writer-undeclared", "P17", "normalises the request JSON but declared only the response writer it had first", func() sdk.Plugin {
			return simple("p-request-writer-undeclared", gateway.Capabilities{ReadsBody: true, WritesResponseBody: true, Description: "Normalises JSON bodies"}, reqWriter{})
		}),
	}
}

// pStreamPluginFaults lists the faulty plugins of P19-P36 and X1: frames, finishing, state, headers, rejections, identity and extensions.
func pStreamPluginFaults() []PluginFault {
	return []PluginFault{
		pf("p-frames-split-on-lf", "P19", "splits each frame on \"\\n\" and takes the second line; a CR-framed stream has one line", func() sdk.Plugin {
			return simple("p-frames-split-on-lf", caps("Reads event names"), lfFrames{})
		}),
		pf("p-fixed-frame-ring", "P20", "keeps the stream's frames in a fixed array of 64 and indexes past it on long streams", func() sdk.Plugin {
			return simple("p-fixed-frame-ring", caps("Keeps recent frames for debugging"), ring{})
		}),
		pf("p-last-frame-parsed", "P21", "parses the closing call's empty frame as JSON like any other and panics on the error", func() sdk.Plugin {
			return simple("p-last-frame-parsed", caps("Extracts usage from streams"), lastParsed{})
		}),
		pf("p-json-frame-as-sse", "P22", "assumes every frame starts with \"data: \" and slices the prefix off a JSON body too", func() sdk.Plugin {
			return simple("p-json-frame-as-sse", caps("Extracts stream payloads"), dataPrefix{})
		}),
		inProcess(pf("p-frame-substring", "P24", "keeps a sub-slice of the first frame as the stream's id, to avoid a copy", func() sdk.Plugin {
			return pipeNamed("p-frame-substring", "p-frame-substring", func(json.RawMessage) gateway.Plugin {
				return &firstFrame{quiet: quiet{ID: "p-frame-substring", Caps: caps("Tags streams with their first event")}}
			})
		})),
		pf("p-finish-needs-start", "P26", "OnFinish reads the start time OnRequest stored; a denied or unseen exchange has none and it panics", func() sdk.Plugin {
			return simple("p-finish-needs-start", caps("Measures request latency"), needsStart{})
		}),
		pf("p-finish-unbuffered-queue", "P28", "OnFinish sends each audit record on an unbuffered channel whose reader was never started", func() sdk.Plugin {
			return simple("p-finish-unbuffered-queue", caps("Ships audit records"), &queueFinish{q: make(chan string)})
		}),
		pf("p-finish-assumes-allow", "P29", "OnFinish reads the outcome as allow without checking it; a deny with no response panics", func() sdk.Plugin {
			return simple("p-finish-assumes-allow", caps("Bills allowed requests"), allowOnly{})
		}),
		pf("p-finish-trailer", "P30", "OnFinish appends a usage trailer to the response body, which is long gone", func() sdk.Plugin {
			return simple("p-finish-trailer", gateway.Capabilities{ReadsBody: true, WritesResponseBody: true, Description: "Appends usage trailers"}, trailer{})
		}),
		pf("p-model-remembered", "P31", "keeps the last model it saw in the instance and tags requests without one with it", func() sdk.Plugin {
			return pipeNamed("p-model-remembered", "p-model-remembered", func(json.RawMessage) gateway.Plugin {
				return &remember{quiet: quiet{ID: "p-model-remembered", Caps: gateway.Capabilities{ReadsBody: true, Description: "Tags requests with their model"}}}
			})
		}),
		pf("p-connection-close", "P32", "sets Connection: close on every request to avoid stale upstream connections", func() sdk.Plugin {
			return simple("p-connection-close", caps("Avoids stale upstream connections"), connClose{})
		}),
		pf("p-usage-header-at-end", "P33", "puts the stream's token count in a response header when the stream ends", func() sdk.Plugin {
			return simple("p-usage-header-at-end", caps("Reports token usage in a header"), usageHeader{})
		}),
		pf("p-reject-sets-length", "P34", "its JSON error rejection sets Content-Length, as its old net/http handler did", func() sdk.Plugin {
			return simple("p-reject-sets-length", caps("Rejects requests without a model"), rejectLength{})
		}),
		pf("p-identity-client-only", "P36", "an API key maps to a client, not a user; the identity is set with ClientID and no Subject", func() sdk.Plugin {
			return simple("p-identity-client-only", caps("Authenticates API keys"), clientIdentity{})
		}),
		pf("p-inference-model-number", "X1", "writes the model's version number where the declared schema says the field is a string", func() sdk.Plugin {
			return simple("p-inference-model-number", gateway.Capabilities{ReadsBody: true, Description: "Extracts the model of chat requests",
				Extensions: []gateway.ExtensionSpec{{Key: "inference", Writes: true, Schema: json.RawMessage(`{"type":"object","properties":{"model":{"type":"string"}},"required":["model"]}`)}}}, modelNumber{})
		}),
	}
}

// dPluginFaults lists the faulty plugins of D1-D20: extensions.
func dPluginFaults() []PluginFault {
	return []PluginFault{
		pf("d-point-typo", "D1", "the manifest lists \"tool.beforeCall\", the point's name in the framework it was ported from", func() sdk.Plugin {
			return extension("d-point-typo", intercept.Manifest{PluginID: "d-point-typo", Points: []intercept.Point{"tool.beforeCall"}}, continueAll)
		}),
		pf("d-timeout-minutes", "D3", "the manifest's timeout is in minutes, as its own config was, far above the cap", func() sdk.Plugin {
			return extension("d-timeout-minutes", intercept.Manifest{PluginID: "d-timeout-minutes", Points: []intercept.Point{intercept.ToolBefore}, Timeout: 5 * time.Minute}, continueAll)
		}),
		pf("d-cold-policy-fetch", "D3", "the first call fetches the whole policy bundle synchronously (5.5 s), beyond tool.before's 5 s budget", func() sdk.Plugin {
			var once sync.Once
			return extension("d-cold-policy-fetch", intercept.Manifest{PluginID: "d-cold-policy-fetch", Points: []intercept.Point{intercept.ToolBefore}}, func(ctx context.Context, _ intercept.Point, _ json.RawMessage) (intercept.Answer, error) {
				once.Do(func() { time.Sleep(5500 * time.Millisecond) })
				return intercept.Continue(), nil
			})
		}),
		pf("d-priority-per-mille", "D4", "priority given in per-mille of the framework it was ported from (1500 for \"very high\"), outside the allowed range", func() sdk.Plugin {
			return extension("d-priority-per-mille", intercept.Manifest{PluginID: "d-priority-per-mille", Points: []intercept.Point{intercept.ToolBefore}, Priority: 1500}, continueAll)
		}),
		pf("d-no-plugin-id", "D5", "the manifest is built from a struct whose pluginId tag was misspelt, so the ID stays empty", func() sdk.Plugin {
			return extension("d-no-plugin-id", intercept.Manifest{Points: []intercept.Point{intercept.ToolBefore}}, continueAll)
		}),
		pf("d-pass-decision", "D6", "answers \"pass\", the continue of the framework it was ported from", func() sdk.Plugin {
			return extension("d-pass-decision", intercept.Manifest{PluginID: "d-pass-decision", Points: []intercept.Point{intercept.ToolAfter}}, func(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
				return intercept.Answer{Decision: "pass"}, nil
			})
		}),
		pf("d-block-no-reason", "D7", "blocks rm -rf with the reason left in a log line instead of the answer", func() sdk.Plugin {
			return extension("d-block-no-reason", intercept.Manifest{PluginID: "d-block-no-reason", Points: []intercept.Point{intercept.ToolBefore}}, func(_ context.Context, _ intercept.Point, pl json.RawMessage) (intercept.Answer, error) {
				return intercept.Answer{Decision: intercept.DecisionBlock}, nil
			})
		}),
		pf("d-replace-without-payload", "D8", "answers replace when the arguments were already clean, with no replacement", func() sdk.Plugin {
			return extension("d-replace-without-payload", intercept.Manifest{PluginID: "d-replace-without-payload", Points: []intercept.Point{intercept.ToolBefore}}, func(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
				return intercept.Answer{Decision: intercept.DecisionReplace}, nil
			})
		}),
		pf("d-deny-after-tool", "D9", "denies a failed tool's result at tool.after, where only permission.decision may deny", func() sdk.Plugin {
			return extension("d-deny-after-tool", intercept.Manifest{PluginID: "d-deny-after-tool", Points: []intercept.Point{intercept.ToolAfter}}, func(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
				return intercept.Deny("the tool failed"), nil
			})
		}),
		pf("d-unknown-tool-error", "D13", "returns an error for tools it has no policy for, instead of continuing", func() sdk.Plugin {
			return extension("d-unknown-tool-error", intercept.Manifest{PluginID: "d-unknown-tool-error", Points: []intercept.Point{intercept.ToolBefore}}, func(_ context.Context, _ intercept.Point, pl json.RawMessage) (intercept.Answer, error) {
				var p struct{ Name string }
				_ = json.Unmarshal(pl, &p)
				if p.Name != "bash" {
					return intercept.Answer{}, errors.New("no policy for tool " + p.Name)
				}
				return intercept.Continue(), nil
			})
		}),
		pf("d-slot-typo", "D17", "owns the slot \"tools:bash\" (plural), which names no slot", func() sdk.Plugin {
			return extension("d-slot-typo", intercept.Manifest{PluginID: "d-slot-typo", Points: []intercept.Point{intercept.ToolAfter}, Slots: []string{"tools:bash"}}, continueAll)
		}),
		pf("d-owner-allows", "D19", "as the owner of the bash tool it answers allow at tool.before, as it does at permission.decision", func() sdk.Plugin {
			return extension("d-owner-allows", intercept.Manifest{PluginID: "d-owner-allows", Points: []intercept.Point{intercept.ToolAfter}, Slots: []string{"tool:bash"}}, func(_ context.Context, p intercept.Point, _ json.RawMessage) (intercept.Answer, error) {
				if p == intercept.ToolBefore {
					return intercept.Allow("owner says yes"), nil
				}
				return intercept.Continue(), nil
			})
		}),
		pf("d-notify-flushes", "D20", "Notify writes each session event to a remote log synchronously, waiting on a lock held by a stalled flush", func() sdk.Plugin {
			p := extension("d-notify-flushes", intercept.Manifest{PluginID: "d-notify-flushes", Points: []intercept.Point{intercept.SessionStart, intercept.ToolBefore}}, continueAll)
			p.Extension.New = func() (intercept.Extension, error) {
				return intercept.Funcs{CallFunc: continueAll, NotifyFunc: func(intercept.Point, json.RawMessage) error {
					time.Sleep(3 * time.Second)
					return nil
				}}, nil
			}
			return p
		}),
	}
}

// hPluginFaults lists the faulty plugins of H1-H6: hooks.
func hPluginFaults() []PluginFault {
	return []PluginFault{
		pf("h-hook-without-id", "H1", "the hook's ID is read from an environment variable that is unset outside production", func() sdk.Plugin {
			return hookPlugin("h-hook-without-id", &sdk.HookSet{Submit: []hooks.SubmitHook{hooks.NewSubmitHook(hooks.Spec{ID: "", Kind: hooks.KindSubmit}, func(context.Context, *hooks.Submit) error { return nil })}})
		}),
		pf("h-part-fails-open", "H2", "a fail-open part hook returns an error on parts without text, losing its redaction on every other part too", func() sdk.Plugin {
			return hookPlugin("h-part-fails-open", &sdk.HookSet{Parts: []hooks.PartHook{hooks.NewPartHook(hooks.Spec{ID: "redact-parts", Kind: hooks.KindRequestPart, Policy: hooks.PolicyFailOpen}, func(_ context.Context, p hooks.Part) (hooks.Part, error) {
				return p, errors.New("part has no text field")
			})}})
		}),
		pf("h-submit-errors", "H3", "a fail-closed submit hook returns an error (not a rejection) for models it does not know", func() sdk.Plugin {
			return hookPlugin("h-submit-errors", &sdk.HookSet{Submit: []hooks.SubmitHook{hooks.NewSubmitHook(hooks.Spec{ID: "model-check", Kind: hooks.KindSubmit, Policy: hooks.PolicyFailClosed}, func(_ context.Context, s *hooks.Submit) error {
				return errors.New("unknown model " + s.Model)
			})}})
		}),
		pf("h-reject-without-reason", "H4", "rejects with hooks.Reject(\"\") because the reason is logged separately", func() sdk.Plugin {
			return hookPlugin("h-reject-without-reason", &sdk.HookSet{Submit: []hooks.SubmitHook{hooks.NewSubmitHook(hooks.Spec{ID: "quota", Kind: hooks.KindSubmit}, func(context.Context, *hooks.Submit) error {
				return hooks.Reject("")
			})}})
		}),
		pf("h-rewrite-unknown-field", "H5", "rewrites the field \"args\" (its old name) instead of \"arguments\"", func() sdk.Plugin {
			return hookPlugin("h-rewrite-unknown-field", &sdk.HookSet{Tools: []hooks.ToolReactor{hooks.NewToolReactor(hooks.Spec{ID: "sanitise", Kind: hooks.KindTool}, func(_ context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
				return hooks.ToolDecision{Kind: hooks.DecisionRewrite, Fields: map[string]json.RawMessage{"args": json.RawMessage(`{}`)}}, nil
			})}})
		}),
		pf("h-reactor-errors-on-result", "H6", "the tool reactor returns an error for error results instead of passing them on", func() sdk.Plugin {
			return hookPlugin("h-reactor-errors-on-result", &sdk.HookSet{Tools: []hooks.ToolReactor{hooks.NewToolReactor(hooks.Spec{ID: "audit-tools", Kind: hooks.KindTool}, func(_ context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
				if ev.IsError {
					return hooks.ToolDecision{}, errors.New("tool failed: " + string(ev.Result))
				}
				return hooks.Pass(), nil
			})}})
		}),
	}
}

// Building blocks.

func caps(desc string) gateway.Capabilities { return gateway.Capabilities{Description: desc} }

func plugin(f gateway.Factory) sdk.Plugin {
	return sdk.Plugin{Name: f.Name, Description: "A faulty plugin of the contract-fault corpus", Pipeline: &f}
}

func factory(name string, mk func(json.RawMessage) gateway.Plugin) gateway.Factory {
	return gateway.Factory{Name: name, New: func(cfg json.RawMessage) (gateway.Plugin, error) { return mk(cfg), nil }}
}

func pipeNamed(name, _ string, mk func(json.RawMessage) gateway.Plugin) sdk.Plugin {
	return plugin(factory(name, mk))
}

// hookFuncs are the hooks a simple fault overrides; the rest pass.
type hookFuncs interface{ apply(q quiet) gateway.Plugin }

func simple(name string, c gateway.Capabilities, h hookFuncs) sdk.Plugin {
	return plugin(factory(name, func(json.RawMessage) gateway.Plugin { return h.apply(quiet{ID: name, Caps: c}) }))
}

// quiet passes everything on: the base each simple fault embeds.
type quiet = passthrough.Plugin

type controlHooks struct{}

func (controlHooks) apply(q quiet) gateway.Plugin { return controlQ{q} }

type controlQ struct{ quiet }

func (controlQ) OnResponseFrame(context.Context, *gateway.Exchange, []byte, bool) gateway.Action {
	return gateway.Continue()
}
func (controlQ) OnFinish(context.Context, *gateway.Exchange) error { return nil }
func (controlQ) Init(context.Context) error                        { return nil }
func (controlQ) Ready(context.Context) error                       { return nil }
func (controlQ) Shutdown(context.Context) error                    { return nil }

type quietHooks struct{}

func (quietHooks) apply(q quiet) gateway.Plugin { return q }

type withInit struct{ err error }

func (w withInit) apply(q quiet) gateway.Plugin { return initQ{q, w.err} }

type initQ struct {
	quiet
	err error
}

func (i initQ) Init(context.Context) error { return i.err }

type withShutdown struct{}

func (withShutdown) apply(q quiet) gateway.Plugin { return shutQ{q} }

type shutQ struct{ quiet }

func (shutQ) Shutdown(context.Context) error {
	return errors.New("close access.log: file already closed")
}

type slowReady struct{}

func (slowReady) apply(q quiet) gateway.Plugin { return slowReadyQ{q} }

type slowReadyQ struct{ quiet }

func (slowReadyQ) Ready(ctx context.Context) error {
	select {
	case <-time.After(300 * time.Millisecond):
	case <-ctx.Done():
	}
	return nil
}

type poolReady struct {
	quiet
	mu   sync.Mutex
	pool *struct{ open int }
}

func (p *poolReady) Init(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pool = &struct{ open int }{open: 4}
	return nil
}

func (p *poolReady) Ready(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pool.open == 0 { // the bug: nil before Init
		return errors.New("no open connection")
	}
	return nil
}

type bodyModel struct{}

func (bodyModel) apply(q quiet) gateway.Plugin { return bodyModelQ{q} }

type bodyModelQ struct{ quiet }

func (bodyModelQ) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	var m map[string]any
	_ = json.Unmarshal(ex.RequestBody(), &m)
	if m == nil && ex.Request.Method == http.MethodGet {
		var missing *map[string]any
		_ = (*missing)["model"] // the bug: no body, no map
	}
	return gateway.Continue()
}

type respJSON struct{}

func (respJSON) apply(q quiet) gateway.Plugin { return respJSONQ{q} }

type respJSONQ struct{ quiet }

func (respJSONQ) OnResponse(_ context.Context, ex *gateway.Exchange) gateway.Action {
	var v any
	_ = json.Unmarshal(ex.ResponseBody(), &v)
	if len(ex.ResponseBody()) > 0 {
		_ = v.(map[string]any)["usage"] // the bug: text/plain is not an object
	}
	return gateway.Continue()
}

type reqWriter struct{}

func (reqWriter) apply(q quiet) gateway.Plugin { return reqWriterQ{q} }

type reqWriterQ struct{ quiet }

func (reqWriterQ) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	if b := ex.RequestBody(); len(b) > 0 {
		ex.SetRequestBody(gateway.CompactJSON(b))
	}
	return gateway.Continue()
}

type lfFrames struct{}

func (lfFrames) apply(q quiet) gateway.Plugin { return lfFramesQ{q} }

type lfFramesQ struct{ quiet }

func (lfFramesQ) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	if last || !strings.Contains(ex.Response.Header.Get("Content-Type"), "event-stream") {
		return gateway.Continue()
	}
	lines := strings.Split(strings.TrimSpace(string(frame)), "\n")
	if strings.HasPrefix(lines[0], "event:") || strings.HasPrefix(lines[0], "id:") || strings.Contains(lines[0], "\r") {
		_ = lines[1] // the bug: a CR-framed block is one "line"
	}
	return gateway.Continue()
}

type ring struct{}

func (ring) apply(q quiet) gateway.Plugin { return ringQ{q} }

type ringQ struct{ quiet }

type ringState struct {
	frames [64][]byte
	n      int
}

var ringKey = gateway.NewKey[*ringState]("p-fixed-frame-ring")

func (ringQ) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	st, ok := gateway.GetState(ex, ringKey)
	if !ok {
		st = &ringState{}
		gateway.SetState(ex, ringKey, st)
	}
	if !last {
		st.frames[st.n] = append([]byte(nil), frame...) // the bug: n is never wrapped
		st.n++
	}
	return gateway.Continue()
}

type lastParsed struct{}

func (lastParsed) apply(q quiet) gateway.Plugin { return lastParsedQ{q} }

type lastParsedQ struct{ quiet }

func (lastParsedQ) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	payload := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(frame)), "data:"))
	if payload == "[DONE]" || strings.HasPrefix(payload, ":") {
		return gateway.Continue()
	}
	if last && len(frame) == 0 {
		var v map[string]any
		if err := json.Unmarshal(frame, &v); err != nil {
			panic("usage: " + err.Error()) // the bug: the closing call has no frame
		}
	}
	return gateway.Continue()
}

type dataPrefix struct{}

func (dataPrefix) apply(q quiet) gateway.Plugin { return dataPrefixQ{q} }

type dataPrefixQ struct{ quiet }

func (dataPrefixQ) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	if len(frame) == 0 {
		return gateway.Continue()
	}
	payload := frame[bytes.Index(frame, []byte("data:")):] // the bug: a JSON body has no "data:", the index is -1
	_ = payload
	return gateway.Continue()
}

type firstFrame struct {
	quiet
	mu sync.Mutex
}

var firstKey = gateway.NewKey[*[]byte]("p-frame-substring")

func (f *firstFrame) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	kept, ok := gateway.GetState(ex, firstKey)
	if !ok && !last && len(frame) > 0 {
		id := frame[:min(len(frame), 24)] // the bug: a sub-slice of a borrowed frame
		gateway.SetState(ex, firstKey, &id)
		return gateway.Continue()
	}
	if last && ok {
		ex.SetExtension("stream-tag", string(*kept))
	}
	return gateway.Continue()
}

type needsStart struct{}

func (needsStart) apply(q quiet) gateway.Plugin { return needsStartQ{q} }

type needsStartQ struct{ quiet }

var startKey = gateway.NewKey[*time.Time]("p-finish-needs-start")

func (needsStartQ) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	now := time.Now()
	gateway.SetState(ex, startKey, &now)
	return gateway.Continue()
}

func (needsStartQ) OnFinish(_ context.Context, ex *gateway.Exchange) error {
	start, _ := gateway.GetState(ex, startKey)
	_ = time.Since(*start) // the bug: nil when OnRequest never ran
	return nil
}

type queueFinish struct{ q chan string }

func (f *queueFinish) apply(q quiet) gateway.Plugin { return queueFinishQ{q, f.q} }

type queueFinishQ struct {
	quiet
	q chan string
}

func (f queueFinishQ) OnFinish(_ context.Context, ex *gateway.Exchange) error {
	f.q <- ex.Request.URL // the bug: nobody reads, and ctx is not selected on
	return nil
}

type allowOnly struct{}

func (allowOnly) apply(q quiet) gateway.Plugin { return allowOnlyQ{q} }

type allowOnlyQ struct{ quiet }

func (allowOnlyQ) OnFinish(_ context.Context, ex *gateway.Exchange) error {
	o, _ := ex.Outcome()
	if o.Kind != gateway.OutcomeAllow {
		var bill *struct{ status int }
		_ = bill.status // the bug: the bill is made only for allowed exchanges
	}
	return nil
}

type trailer struct{}

func (trailer) apply(q quiet) gateway.Plugin { return trailerQ{q} }

type trailerQ struct{ quiet }

func (trailerQ) OnFinish(_ context.Context, ex *gateway.Exchange) error {
	ex.SetResponseBody(append(ex.ResponseBody(), "\n# usage: 12 tokens"...))
	return nil
}

type remember struct {
	quiet
	mu   sync.Mutex
	last string
}

func (r *remember) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	var b struct{ Model string }
	_ = json.Unmarshal(ex.RequestBody(), &b)
	r.mu.Lock()
	defer r.mu.Unlock()
	if b.Model == "" {
		b.Model = r.last // the bug: the previous exchange's model
	}
	r.last = b.Model
	if b.Model != "" {
		ex.SetExtension("model-tag", b.Model)
	}
	return gateway.Continue()
}

type connClose struct{}

func (connClose) apply(q quiet) gateway.Plugin { return connCloseQ{q} }

type connCloseQ struct{ quiet }

func (connCloseQ) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	ex.Request.Header.Set("Connection", "close")
	return gateway.Continue()
}

type usageHeader struct{}

func (usageHeader) apply(q quiet) gateway.Plugin { return usageHeaderQ{q} }

type usageHeaderQ struct{ quiet }

var usageKey = gateway.NewKey[*int]("p-usage-header-at-end")

func (usageHeaderQ) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	n, ok := gateway.GetState(ex, usageKey)
	if !ok {
		n = new(int)
		gateway.SetState(ex, usageKey, n)
	}
	*n += len(frame) / 4
	if last {
		ex.Response.Header.Set("X-Usage-Tokens", strings.Repeat("1", 1+*n%3))
	}
	return gateway.Continue()
}

type rejectLength struct{}

func (rejectLength) apply(q quiet) gateway.Plugin { return rejectLengthQ{q} }

type rejectLengthQ struct{ quiet }

func (rejectLengthQ) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	if ex.Request.Method != http.MethodPost {
		return gateway.Continue()
	}
	body := []byte(`{"error":"model required"}`)
	if strings.Contains(string(ex.RequestBody()), `"model"`) {
		return gateway.Continue()
	}
	return gateway.RejectWith(http.StatusBadRequest, "model required", gateway.Rejection{ContentType: "application/json", Body: body,
		Header: http.Header{"Content-Length": {"26"}}})
}

type clientIdentity struct{}

func (clientIdentity) apply(q quiet) gateway.Plugin { return clientIdentityQ{q} }

type clientIdentityQ struct{ quiet }

func (clientIdentityQ) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	if id := ex.Request.Header.Get("X-Client-Id"); id != "" {
		ex.SetIdentity(gateway.Identity{ClientID: id})
	}
	return gateway.Continue()
}

type modelNumber struct{}

func (modelNumber) apply(q quiet) gateway.Plugin { return modelNumberQ{q} }

type modelNumberQ struct{ quiet }

func (modelNumberQ) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	var b struct{ Model string }
	if json.Unmarshal(ex.RequestBody(), &b) == nil && strings.HasPrefix(b.Model, "gpt-") {
		ex.SetExtension("inference", map[string]any{"model": 4}) // the bug: "gpt-4o" became its version
	}
	return gateway.Continue()
}

func continueAll(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
	return intercept.Continue(), nil
}

func extension(name string, m intercept.Manifest, call func(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error)) sdk.Plugin {
	e := intercept.Funcs{CallFunc: call}
	return sdk.Plugin{Name: name, Description: "A faulty extension of the contract-fault corpus",
		Extension: &sdk.Extension{Manifest: m, New: func() (intercept.Extension, error) { return e, nil }}}
}

func hookPlugin(name string, hs *sdk.HookSet) sdk.Plugin {
	return sdk.Plugin{Name: name, Description: "A faulty hook of the contract-fault corpus", Hooks: hs}
}
