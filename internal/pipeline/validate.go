// Package pipeline is abkit's reference runtime for the request pipeline
// (family P of docs/contracts.md): it validates and builds a plugin chain
// ([P1]–P11), runs its lifecycle (P12–P14) and drives exchanges through it
// (P15–P31), emitting an ordered trace of every hook call.
//
// The usual flow is:
//
//	chain, err := pipeline.Build(spec, factories, pipeline.Options{})
//	err = chain.Start(ctx)
//	res := chain.Run(ctx, req, upstream, pipeline.ExchangeOptions{Trace: rec})
//	err = chain.Stop(ctx)
//
// A host that talks to a real upstream drives the stages of an [Exchange]
// itself: [Chain.NewExchange], [Exchange.Request], [Exchange.Respond] (or
// [Exchange.Fail]) and [Exchange.Finish].
//
// [Validate] checks a chain from static descriptors only, without making
// plugin instances; the catalog uses it to check chain files.
//
// [P1]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package pipeline

import (
	"bytes"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/abkit/abkit/sdk/gateway"
)

// OnError is a chain entry's error policy (P6).
type OnError string

const (
	// Enforce: a rejection denies the exchange. It is the default ("").
	Enforce OnError = "enforce"
	// Observe: a rejection (or a panic) is recorded as a shadow decision and
	// the chain goes on.
	Observe OnError = "observe"
	// Off: the entry is dropped before validation.
	Off OnError = "off"
)

// Mode is the kind of host a chain is built for.
type Mode string

const (
	// Proxy mode has a body mutation channel. It is the default ("").
	Proxy Mode = "proxy"
	// Waypoint mode is authorisation-only: no plugin may declare a write
	// capability (P10).
	Waypoint Mode = "waypoint"
)

// Entry is one chain entry (P6).
type Entry struct {
	// Plugin is the registered plugin name (P1).
	Plugin string `json:"plugin"`
	// Config is the entry's raw JSON configuration block, or nil.
	Config []byte `json:"config,omitempty"`
	// OnError is the error policy; empty means Enforce.
	OnError OnError `json:"on_error,omitempty"`
}

// Spec describes one chain: its direction, mode and entries in declaration
// order.
type Spec struct {
	Direction gateway.Direction `json:"-"`
	Mode      Mode              `json:"mode,omitempty"`
	Entries   []Entry           `json:"entries"`
	// RepeatedNames lets a name stand in a chain more than once, each entry
	// its own instance, the first counting for requires (P7, P8); an entry
	// naming no plugin is then an unknown plugin (P6). It is the other
	// alternative of choice P1.names, AuthBridge's; by default names are
	// unique and non-empty (P1).
	RepeatedNames bool `json:"-"`
}

// Info is what Validate needs to know about a registered plugin, without an
// instance.
type Info struct {
	Name string
	// Capabilities as the plugin declares them; Validate normalises them
	// (P4).
	Capabilities gateway.Capabilities
	// TakesConfig reports whether the plugin has a configuration schema.
	TakesConfig bool
	// NoCapabilities says the capabilities could not be read (for example
	// the instance could not be made); Validate then skips the checks that
	// need them for this plugin.
	NoCapabilities bool
}

// RuleError is one contract violation found while validating or building a
// chain.
type RuleError struct {
	// Plugin is the entry's plugin name (may be empty for a nameless entry).
	Plugin string
	// Rule is the contract rule ID, such as "P7".
	Rule string
	// Entry is the index of the entry in Spec.Entries (before off entries
	// were dropped), or -1 when the error is not about one entry. Messages
	// count entries from 1, as an operator counts the list in the chain
	// file and as abctl shows it (entry 1 is Spec.Entries[0]).
	Entry int
	// Msg says what is wrong; Fix says what to do about it.
	Msg string
	Fix string
	// Warning marks a finding that does not stop a build: the source states
	// the rule but does not enforce it (P5), or the rule is abkit's own
	// advice (X1, X2). Build returns the chain and keeps it in
	// Chain.Warnings; lint and conformance report it.
	Warning bool
}

func (e *RuleError) Error() string {
	var b strings.Builder
	if e.Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(e.Rule)
	if e.Entry >= 0 {
		fmt.Fprintf(&b, ": entry %d", e.Entry+1)
	}
	if e.Plugin != "" {
		fmt.Fprintf(&b, " (%s)", e.Plugin)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Fix != "" {
		b.WriteString("; fix: ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

// BuildError holds every error found in one chain (P6: all of them, not just
// the first). Each part can be inspected with errors.As through Unwrap.
type BuildError struct {
	Direction gateway.Direction
	Errs      []*RuleError
}

func (e *BuildError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s chain: %d error(s):", e.Direction, len(e.Errs))
	for _, re := range e.Errs {
		b.WriteString("\n  ")
		b.WriteString(re.Error())
	}
	return b.String()
}

// Unwrap returns each RuleError as its own error.
func (e *BuildError) Unwrap() []error {
	out := make([]error, len(e.Errs))
	for i, re := range e.Errs {
		out[i] = re
	}
	return out
}

// active is an entry that survived the off filter, with its original index.
type active struct {
	idx   int
	entry Entry
	info  Info
	known bool
}

// Validate checks spec against the static descriptors lookup returns: P1
// (names), P4 (normalisation, applied before any other check), P5
// (description), P6 (unknown names, config blocks, error policies), P7, P8,
// P9 and P10. registered lists every registered name, for the message about
// an unknown one. Entries with OnError off are dropped first and never
// checked. It returns every error found, in entry order, or nil.
func Validate(spec Spec, lookup func(name string) (Info, bool), registered []string) []*RuleError {
	v := &validation{}
	switch spec.Mode {
	case "", Proxy, Waypoint:
	default:
		v.add(-1, "", "P10", `set mode to "proxy" or "waypoint"`, "unknown chain mode %q", spec.Mode)
	}
	act := v.entries(spec, lookup, registered)
	reqWriter, respWriter := v.order(spec, act)
	v.readersAfterWriters(act, reqWriter, respWriter)
	validateExtensions(act, v.warn)
	slices.SortStableFunc(v.errs, func(a, b *RuleError) int { return a.Entry - b.Entry })
	return v.errs
}

// validation gathers Validate's findings.
type validation struct{ errs []*RuleError }

func (v *validation) add(idx int, plugin, rule, fix, format string, args ...any) {
	v.errs = append(v.errs, &RuleError{Plugin: plugin, Rule: rule, Entry: idx, Msg: fmt.Sprintf(format, args...), Fix: fix})
}

func (v *validation) warn(idx int, plugin, rule, fix, format string, args ...any) {
	v.add(idx, plugin, rule, fix, format, args...)
	v.errs[len(v.errs)-1].Warning = true
}

// entries checks the error policies (P6), drops the entries that are off,
// and checks names, registration and config blocks (P1, P4, P5, P6) of the
// rest, which it returns.
func (v *validation) entries(spec Spec, lookup func(name string) (Info, bool), registered []string) []active {
	var act []active
	for i, e := range spec.Entries {
		switch e.OnError {
		case "", Enforce, Observe:
		case Off:
			continue
		default:
			v.add(i, e.Plugin, "P6", `set on_error to "enforce", "observe" or "off"`, "unknown on_error policy %q", e.OnError)
		}
		act = append(act, active{idx: i, entry: e})
	}

	// P1 and P6: names, registration, config blocks.
	seen := make(map[string]int, len(act))
	for k := range act {
		a := &act[k]
		name := a.entry.Plugin
		if name == "" && spec.RepeatedNames {
			v.add(a.idx, "", "P6", "give the entry the registered name of a plugin", "entry names no plugin: unknown plugin \"\"")
			continue
		}
		if name == "" {
			v.add(a.idx, "", "P1", "give the entry the registered name of a plugin", "entry names no plugin")
			continue
		}
		if first, dup := seen[name]; dup && !spec.RepeatedNames {
			v.add(a.idx, name, "P1", "remove the duplicate entry or register the second variant under another name",
				"plugin %q appears twice in the chain (entries %d and %d); names must be unique within a chain", name, first, a.idx)
		} else {
			seen[name] = a.idx
		}
		info, ok := lookup(name)
		if !ok {
			reg := slices.Clone(registered)
			slices.Sort(reg)
			v.add(a.idx, name, "P6", "use one of the registered names or register the plugin",
				"unknown plugin %q; registered: %s", name, listOrNone(reg))
			continue
		}
		if info.NoCapabilities {
			if hasConfig(a.entry.Config) && !info.TakesConfig {
				v.add(a.idx, name, "P6", "remove the config block from the entry",
					"plugin %q takes no configuration, but the entry has a config block", name)
			}
			continue
		}
		a.known = true
		info.Capabilities = info.Capabilities.Normalize() // P4, before anything reads them
		a.info = info
		if hasConfig(a.entry.Config) && !info.TakesConfig {
			v.add(a.idx, name, "P6", "remove the config block from the entry",
				"plugin %q takes no configuration, but the entry has a config block", name)
		}
		if err := gateway.CheckDescription(info.Capabilities.Description); err != nil {
			// The source states the limit and never enforces it: report,
			// do not refuse (docs/contracts.md, the build refusal review).
			v.warn(a.idx, name, "P5", "fix the plugin's Capabilities().Description", "%v", err)
		}
	}

	return act
}

// knownEntries yields the entries of act whose plugin is known, with their
// positions in act: the order and extension checks pass over the others.
func knownEntries(act []active) iter.Seq2[int, *active] {
	return func(yield func(int, *active) bool) {
		for k := range act {
			if act[k].known && !yield(k, &act[k]) {
				return
			}
		}
	}
}

// order checks dependencies (P7, P8), waypoint body writes (P10) and body
// writers (P9), and returns the positions in act of the request- and
// response-body writers (-1 for none).
func (v *validation) order(spec Spec, act []active) (reqWriter, respWriter int) {
	pos := make(map[string]int, len(act)) // name -> position in act (first occurrence)
	for k := len(act) - 1; k >= 0; k-- {
		if act[k].entry.Plugin != "" {
			pos[act[k].entry.Plugin] = k
		}
	}

	reqWriter, respWriter = -1, -1
	for k, a := range knownEntries(act) {
		name, caps := a.entry.Plugin, a.info.Capabilities
		// P7: every required name present and earlier.
		for _, dep := range caps.Requires {
			p, ok := pos[dep]
			switch {
			case !ok:
				v.add(a.idx, name, "P7", fmt.Sprintf("add %q to the chain before %q", dep, name),
					"plugin %q requires %q, which is missing from the chain", name, dep)
			case p >= k:
				v.add(a.idx, name, "P7", fmt.Sprintf("move %q before %q", dep, name),
					"plugin %q requires %q, which stands late (entry %d, not before entry %d)", name, dep, act[p].idx+1, a.idx+1)
			}
		}
		// P8: at least one present; every present one earlier.
		if len(caps.RequiresAny) > 0 {
			present := 0
			for _, dep := range caps.RequiresAny {
				p, ok := pos[dep]
				if !ok {
					continue
				}
				present++
				if p >= k {
					v.add(a.idx, name, "P8", fmt.Sprintf("move %q before %q", dep, name),
						"plugin %q requires any of [%s]; %q is present but stands late (entry %d, not before entry %d)",
						name, strings.Join(caps.RequiresAny, ", "), dep, act[p].idx+1, a.idx+1)
				}
			}
			if present == 0 {
				v.add(a.idx, name, "P8", fmt.Sprintf("add one of [%s] to the chain before %q", strings.Join(caps.RequiresAny, ", "), name),
					"plugin %q requires any of [%s], and none is in the chain", name, strings.Join(caps.RequiresAny, ", "))
			}
		}
		// P10: waypoint chains have no body mutation channel.
		if spec.Mode == Waypoint && (caps.WritesRequestBody || caps.WritesResponseBody) {
			v.add(a.idx, name, "P10", "remove the plugin from the waypoint chain or build the chain in proxy mode",
				"plugin %q declares a body write capability, which a waypoint (authorisation-only) chain cannot honour", name)
		}
		// P9: one writer per direction, and no body reader after a writer.
		if caps.WritesRequestBody {
			reqWriter = v.oneWriter(act, k, reqWriter, "request", "writes_request_body")
		}
		if caps.WritesResponseBody {
			respWriter = v.oneWriter(act, k, respWriter, "response", "writes_response_body")
		}
	}
	return reqWriter, respWriter
}

// oneWriter takes act[k], a plugin declaring the body write capability
// what, as the chain's dir-body writer, or reports it when writer, the
// position of that writer so far, is already one (P9). It returns the
// position of the writer after k.
func (v *validation) oneWriter(act []active, k, writer int, dir, what string) int {
	if writer < 0 {
		return k
	}
	a := &act[k]
	v.add(a.idx, a.entry.Plugin, "P9", "keep one "+dir+"-body writer in the chain",
		"plugins %q (entry %d) and %q (entry %d) both declare %s; at most one may",
		act[writer].entry.Plugin, act[writer].idx+1, a.entry.Plugin, a.idx+1, what)
	return writer
}

// readersAfterWriters reports a body reader that stands after a body
// writer of its direction (P9).
func (v *validation) readersAfterWriters(act []active, reqWriter, respWriter int) {
	for _, w := range []struct {
		k    int
		what string
	}{{reqWriter, "writes_request_body"}, {respWriter, "writes_response_body"}} {
		if w.k < 0 {
			continue
		}
		for k := w.k + 1; k < len(act); k++ {
			a := &act[k]
			caps := a.info.Capabilities
			// The other direction's writer reads bodies only by P4, for its
			// own direction: it may stand after this writer, or a chain could
			// never have both writers, which P9 plainly allows.
			other := caps.WritesResponseBody && w.what == "writes_request_body" ||
				caps.WritesRequestBody && w.what == "writes_response_body"
			if !a.known || !caps.ReadsBody || other {
				continue
			}
			wn := act[w.k].entry.Plugin
			v.add(a.idx, a.entry.Plugin, "P9", fmt.Sprintf("move %q before %q", a.entry.Plugin, wn),
				"plugin %q reads bodies but stands after %q (entry %d), which declares %s",
				a.entry.Plugin, wn, act[w.k].idx+1, w.what)
		}
	}
}

// Refusals returns the errors of errs that stop a build, leaving out the
// warnings.
func Refusals(errs []*RuleError) []*RuleError {
	var out []*RuleError
	for _, e := range errs {
		if !e.Warning {
			out = append(out, e)
		}
	}
	return out
}

// hasConfig reports whether an entry's config block is given; absent, empty
// and JSON null all mean none.
func hasConfig(c []byte) bool {
	c = bytes.TrimSpace(c)
	return len(c) > 0 && !bytes.Equal(c, []byte("null"))
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// errorsOf wraps rule errors into a BuildError, or returns nil.
func errorsOf(dir gateway.Direction, errs []*RuleError) error {
	if len(errs) == 0 {
		return nil
	}
	return &BuildError{Direction: dir, Errs: errs}
}
