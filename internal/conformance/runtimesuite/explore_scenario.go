package runtimesuite

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// An explored scenario is data, not code: it is generated from a seed,
// written to a file, read back and replayed (conformance run --scenario),
// and shrunk by removing parts of it. Exactly one of Pipeline, Intercept
// and Hooks is set.
type XScenario struct {
	// Seed and Index say where the generator made it (for the report; a
	// replay needs neither).
	Seed      uint64      `json:"seed,omitempty"`
	Index     int         `json:"index,omitempty"`
	Pipeline  *XPipeline  `json:"pipeline,omitempty"`
	Intercept *XIntercept `json:"intercept,omitempty"`
	Hooks     *XHooks     `json:"hooks,omitempty"`
}

// XPipeline is a family P scenario: plugins, the chain's entries, the
// lifecycle calls and the exchanges.
type XPipeline struct {
	Plugins         []XPlugin   `json:"plugins"`
	Entries         []XEntry    `json:"entries"`
	Mode            string      `json:"mode,omitempty"`
	FinishTimeoutMs int         `json:"finish_timeout_ms,omitempty"`
	Start           bool        `json:"start,omitempty"`
	Ready           int         `json:"ready,omitempty"`
	Stop            bool        `json:"stop,omitempty"`
	Exchanges       []XExchange `json:"exchanges,omitempty"`
}

// XPlugin is one probe plugin and what it does where.
type XPlugin struct {
	Name               string   `json:"name"`
	ReadsBody          bool     `json:"reads_body,omitempty"`
	WritesRequestBody  bool     `json:"writes_request_body,omitempty"`
	WritesResponseBody bool     `json:"writes_response_body,omitempty"`
	Requires           []string `json:"requires,omitempty"`
	Behaviours         []string `json:"behaviours,omitempty"`
	Schema             bool     `json:"schema,omitempty"`
	Acts               []XAct   `json:"acts,omitempty"`
}

// XAct is one scripted answer: at Hook (request, response, frame, last,
// finish, init, ready, shutdown), in exchange Exchange and frame Frame
// (-1: any), the probe does Do: reject, error, panic, hang (past the
// call's deadline), slow, write-body, header, cancel, state or identity.
type XAct struct {
	Hook     string `json:"hook"`
	Exchange int    `json:"exchange"`
	Frame    int    `json:"frame"`
	Do       string `json:"do"`
	Status   int32  `json:"status,omitempty"`
	Body     string `json:"body,omitempty"`
}

// XEntry is one entry of the chain.
type XEntry struct {
	Plugin  string `json:"plugin"`
	OnError string `json:"on_error,omitempty"`
	Config  string `json:"config,omitempty"`
}

// XExchange is one exchange: the request, what the upstream does, and
// whether the client is gone before the chain or the runtime is asked to
// finish twice.
type XExchange struct {
	Method      string   `json:"method"`
	Body        *string  `json:"body,omitempty"`
	Header      []string `json:"header,omitempty"` // "Name: value"
	Upstream    string   `json:"upstream"`         // json, sse or error
	Status      int32    `json:"status,omitempty"`
	JSON        string   `json:"json,omitempty"`
	Chunks      []string `json:"chunks,omitempty"`
	EarlyEnd    bool     `json:"early_end,omitempty"`
	Cancelled   bool     `json:"cancelled,omitempty"`
	FinishTwice bool     `json:"finish_twice,omitempty"`
}

// XIntercept is a family D scenario: one dispatch at Point.
type XIntercept struct {
	Point      string `json:"point"`
	Payload    string `json:"payload"`
	Provider   string `json:"provider,omitempty"`
	Extensions []XExt `json:"extensions"`
}

// XExt is one probe extension and its answer.
type XExt struct {
	ID        string   `json:"id"`
	Required  bool     `json:"required,omitempty"`
	Priority  int32    `json:"priority,omitempty"`
	Slots     []string `json:"slots,omitempty"`
	Points    []string `json:"points,omitempty"` // nil: the scenario's point
	TimeoutMs int      `json:"timeout_ms,omitempty"`
	// Decision is continue, block, replace, allow, deny, bogus, error or
	// hang; Replacement the JSON a replace carries.
	Decision    string `json:"decision"`
	Replacement string `json:"replacement,omitempty"`
	NotifyError bool   `json:"notify_error,omitempty"`
}

// XHooks is a family H scenario: one chain of hooks of Kind.
type XHooks struct {
	Kind   string  `json:"kind"`
	Policy string  `json:"policy,omitempty"`
	Input  string  `json:"input"`
	Hooks  []XHook `json:"hooks"`
}

// XHook is one probe hook: pass, error, panic, reject or value (answer
// Value).
type XHook struct {
	ID     string `json:"id"`
	Order  int64  `json:"order"`
	Policy string `json:"policy,omitempty"`
	Do     string `json:"do"`
	Value  string `json:"value,omitempty"`
}

// Family is the family the scenario exercises.
func (x *XScenario) Family() string {
	switch {
	case x.Pipeline != nil:
		return "P"
	case x.Intercept != nil:
		return "D"
	default:
		return "H"
	}
}

// clone deep-copies the scenario (through JSON: scenarios are small).
func (x *XScenario) clone() *XScenario {
	b, err := json.Marshal(x)
	if err != nil {
		panic(err)
	}
	var y XScenario
	if err := json.Unmarshal(b, &y); err != nil {
		panic(err)
	}
	return &y
}

// Size counts a scenario's parts: what shrinking makes smaller.
func (x *XScenario) Size() int {
	n := 0
	if p := x.Pipeline; p != nil {
		n += len(p.Plugins) + len(p.Entries) + len(p.Exchanges)
		for _, pl := range p.Plugins {
			n += len(pl.Acts) + len(pl.Behaviours)
		}
		for _, e := range p.Exchanges {
			n += len(e.Chunks)
		}
	}
	if d := x.Intercept; d != nil {
		n += len(d.Extensions)
	}
	if h := x.Hooks; h != nil {
		n += len(h.Hooks)
	}
	return n
}

// LoadScenario reads a scenario file written by an exploration.
func LoadScenario(path string) (*XScenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var x XScenario
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("%s: not a scenario file: %w", path, err)
	}
	if n := btoi(x.Pipeline != nil) + btoi(x.Intercept != nil) + btoi(x.Hooks != nil); n != 1 {
		return nil, fmt.Errorf("%s: a scenario has exactly one of pipeline, intercept and hooks; this one has %d", path, n)
	}
	return &x, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// script is the probe script of a plugin's acts.
func (pl XPlugin) script() Script {
	acts := pl.Acts
	name := pl.Name
	return func(c *Call) *abkitv1.ProbeReply {
		for _, a := range acts {
			if !a.matches(c) {
				continue
			}
			return a.reply(c, name)
		}
		return nil
	}
}

func (a XAct) matches(c *Call) bool {
	hook := c.Hook
	if hook == "frame" && c.Last {
		hook = "last"
	}
	if hook != a.Hook {
		return false
	}
	lifecycle := hook == "init" || hook == "ready" || hook == "shutdown"
	if !lifecycle && a.Exchange >= 0 && uint32(a.Exchange) != c.Exchange {
		return false
	}
	return hook != "frame" || a.Frame < 0 || a.Frame == c.FrameIndex
}

// hangFor is how long a hanging probe sleeps: past the call's deadline,
// and past the 100 ms grace a runtime may add, by a margin no busy machine
// closes; a call without a deadline is only
// slowed (a hang there would hang the scenario).
func hangFor(c *Call) time.Duration {
	if c.Deadline <= 0 || c.Deadline > 600*time.Millisecond {
		return 5 * time.Millisecond
	}
	return c.Deadline + 600*time.Millisecond
}

func (a XAct) reply(c *Call, name string) *abkitv1.ProbeReply {
	r := &abkitv1.ProbeReply{}
	switch a.Do {
	case "reject":
		r.Action = &abkitv1.Action{Kind: "reject", Status: a.Status, Reason: "rejected by " + name}
	case "error":
		r.Error = name + " failed"
	case "panic":
		r.Panic = true
	case "hang":
		r.SleepNs = int64(hangFor(c))
	case "slow":
		r.SleepNs = int64(3 * time.Millisecond)
	case "write-body":
		r.Body = []byte(a.Body)
		if c.Hook == "request" {
			r.WriteRequestBody = true
		} else {
			r.WriteResponseBody = true
		}
	case "header":
		d := &abkitv1.HeaderDelta{Set: []*abkitv1.Header{{Name: "X-Probe-" + name, Values: []string{a.Body}}}}
		if c.Hook == "request" {
			r.RequestHeader = d
		} else {
			r.ResponseHeader = d
		}
	case "cancel":
		r.CancelClient = true
	case "state":
		r.SetState, r.State = true, fmt.Sprintf("%s@%d", name, c.Exchange)
	case "identity":
		r.SetIdentityJson = []byte(fmt.Sprintf(`{"subject":%q}`, name))
	}
	return r
}

// proto turns the pipeline scenario into the runtime protocol's, with its
// probes on s.
func (p *XPipeline) proto(s *Session) *abkitv1.PipelineScenario {
	sc := &abkitv1.PipelineScenario{BrokerId: s.Broker(), Direction: "inbound", Mode: p.Mode, FinishTimeoutNs: int64(p.FinishTimeoutMs) * int64(time.Millisecond),
		Start: p.Start, ReadyCalls: uint32(p.Ready), Stop: p.Stop}
	if p.Stop {
		sc.StopTimeoutNs = int64(time.Second)
	}
	for _, pl := range p.Plugins {
		ps := &abkitv1.ProbeSpec{Probe: s.Probe(pl.Name, pl.script()), Name: pl.Name, Behaviours: pl.Behaviours,
			Capabilities: &abkitv1.Capabilities{Description: "probe " + pl.Name, ReadsBody: pl.ReadsBody, WritesRequestBody: pl.WritesRequestBody,
				WritesResponseBody: pl.WritesResponseBody, Requires: pl.Requires}}
		if pl.Schema {
			ps.ConfigSchemaJson = []byte(`{"type":"object"}`)
		}
		sc.Plugins = append(sc.Plugins, ps)
	}
	for _, e := range p.Entries {
		en := &abkitv1.PipelineEntry{Plugin: e.Plugin, OnError: e.OnError}
		if e.Config != "" {
			en.ConfigJson = []byte(e.Config)
		}
		sc.Entries = append(sc.Entries, en)
	}
	for _, x := range p.Exchanges {
		rq := &abkitv1.HTTPRequest{Method: x.Method, Url: "http://upstream/x"}
		if x.Body != nil {
			rq.HasBody, rq.Body = true, []byte(*x.Body)
		}
		for _, h := range x.Header {
			n, v, _ := strings.Cut(h, ": ")
			rq.Header = append(rq.Header, &abkitv1.Header{Name: n, Values: []string{v}})
		}
		var up *abkitv1.UpstreamSpec
		switch x.Upstream {
		case "error":
			up = &abkitv1.UpstreamSpec{Error: "connection refused"}
		case "sse":
			up = sseUpstream(x.Chunks, x.EarlyEnd)
		default:
			up = jsonUpstream(x.JSON)
		}
		if x.Status != 0 && x.Upstream != "error" {
			up.Status = x.Status
		}
		sc.Exchanges = append(sc.Exchanges, &abkitv1.ExchangeSpec{Request: rq, Upstream: up, Cancelled: x.Cancelled, FinishTwice: x.FinishTwice})
	}
	return sc
}

func (d *XIntercept) proto(s *Session) *abkitv1.InterceptScenario {
	sc := &abkitv1.InterceptScenario{BrokerId: s.Broker(), Point: d.Point, PayloadJson: []byte(d.Payload), Provider: d.Provider, Repeat: 1}
	for _, e := range d.Extensions {
		pts := e.Points
		if pts == nil {
			pts = []string{d.Point}
		}
		e := e
		script := func(c *Call) *abkitv1.ProbeReply {
			if c.Hook == "notify" {
				if e.NotifyError {
					return &abkitv1.ProbeReply{Error: "cannot hear"}
				}
				return nil
			}
			switch e.Decision {
			case "error":
				return &abkitv1.ProbeReply{Error: e.ID + " failed"}
			case "hang":
				return &abkitv1.ProbeReply{SleepNs: int64(hangFor(c))}
			case "", "continue":
				return nil
			}
			return &abkitv1.ProbeReply{Decision: e.Decision, Reason: "by " + e.ID, ReplacementJson: []byte(e.Replacement)}
		}
		sc.Extensions = append(sc.Extensions, &abkitv1.ProbeSpec{Probe: s.Probe(e.ID, script), Name: e.ID,
			Manifest: &abkitv1.Manifest{PluginId: e.ID, Required: e.Required, Priority: e.Priority, Slots: e.Slots, Points: pts,
				TimeoutNs: int64(e.TimeoutMs) * int64(time.Millisecond)}})
	}
	return sc
}

func (h *XHooks) proto(s *Session) *abkitv1.HookScenario {
	sc := &abkitv1.HookScenario{BrokerId: s.Broker(), Kind: h.Kind, ToolPolicy: h.Policy, InputJson: []byte(h.Input)}
	for _, k := range h.Hooks {
		k := k
		script := func(*Call) *abkitv1.ProbeReply {
			switch k.Do {
			case "error":
				return &abkitv1.ProbeReply{Error: k.ID + " failed"}
			case "panic":
				return &abkitv1.ProbeReply{Panic: true}
			case "reject":
				return &abkitv1.ProbeReply{Reject: "rejected by " + k.ID}
			case "value":
				return &abkitv1.ProbeReply{ValueJson: []byte(k.Value)}
			}
			return nil
		}
		sc.Hooks = append(sc.Hooks, &abkitv1.ProbeSpec{Probe: s.Probe(k.ID, script), Name: k.ID,
			Hook: &abkitv1.HookSpec{Id: k.ID, Order: k.Order, Policy: k.Policy, Kind: h.Kind}})
	}
	return sc
}

// WriteScenario writes x to path as a scenario file.
func WriteScenario(path string, x *XScenario) error {
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
