// Package broken holds purpose-built broken plugins: each breaks one
// contract rule and is otherwise well behaved, so the conformance suite's
// own tests can check that it fails exactly the cases citing that rule.
// testdata/broken/main.go serves them as binaries, picking the plugin by
// the binary's name.
package broken

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abkit/abkit/internal/conformance/passthrough"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/intercept"
)

// Expect maps each broken plugin to the cases it must fail, and no other.
// The chunk-dependent plugin keeps borrowed frames (P24); across the
// protocol every frame is a fresh message, so only the in-process run can
// catch it (ExpectInProcess).
var Expect = map[string][]string{
	"caps-drift":       {"P2/capabilities/instances-agree"},
	"long-description": {"P5/description/capabilities"},
	"silent-parser":    {"X1/outputs/written"},
	// Describe and NewInstance disagree: the monitor fails, citing P2,
	// every case that makes an instance (all the exchange cases).
	"describe-writes":         {"P15/hooks/legal-actions", "P17/body-write/declared-only", "P20/long-run/hundreds", "P31/concurrent/matches-sequential", "P31/instances/second-instance", "P31/state/no-carry-over", "P32/headers/request-changes", "P33/headers/after-head", "P34/rejection/headers", "P36/identity/shape"},
	"describe-stream":         {"P15/hooks/legal-actions", "P17/body-write/declared-only", "P19/chunking/independent", "P19/frames/one-frame", "P19/framing/every-shape", "P20/frames/many-frames", "P20/long-run/hundreds", "P21/last-exactly-once/early-end", "P21/last-exactly-once/zero-frames", "P22/json-one-frame/whole-body", "P24/borrowed-bytes/poisoned-frames", "P31/concurrent/matches-sequential", "P31/instances/second-instance", "P31/state/no-carry-over", "P32/headers/request-changes", "P33/headers/after-head", "P34/rejection/headers", "P36/identity/shape"},
	"long-bundle-description": {"P5/description/plugin"},
	"undeclared-write":        {"P17/body-write/declared-only"},
	"allow-at-tool-before":    {"D9/decisions/legal-per-point"},
	"replace-unknown-field":   {"D8/replace/strict-decode"},
	"slow-finish":             {"P26/finish/nothing-reserved", "P26/finish/unseen-request", "P28/finish/deadline-axis", "P28/finish/within-deadline"},
	// chunk-dependent keeps its frames in the instance: exchanges run at
	// once mix them (P31), in every process.
	"chunk-dependent":  {"P31/concurrent/matches-sequential"},
	"crash-mid-stream": {"P20/frames/many-frames"},
	"hang":             {"P13/lifecycle/orders", "P14/ready/concurrent-consistent", "P14/ready/fast"},
	"framing-header":   {"P32/headers/request-changes"},
	"late-header":      {"P33/headers/after-head"},
	// forks-child honours every rule; as a binary it starts a helper
	// process that outlives it unless the host kills its process group.
	"forks-child": {},
}

// ExpectInProcess overrides Expect for the in-process run.
// In-process, "two fresh processes" share the plugin value and its
// instance counter, which cases running in parallel advance too, so whether
// P2/capabilities/across-processes sees caps-drift's drift depends on
// scheduling: the in-process run skips that case for it (SkipInProcess).
var ExpectInProcess = map[string][]string{
	"caps-drift":      {"P2/capabilities/instances-agree"},
	"chunk-dependent": {"P19/chunking/independent", "P24/borrowed-bytes/poisoned-frames"},
}

// SkipInProcess lists, per broken plugin, the cases whose in-process
// verdict depends on scheduling (see ExpectInProcess).
var SkipInProcess = map[string][]string{
	"caps-drift": {"P2/capabilities/across-processes"},
	// In-process hook calls are so short that exchanges run at once may
	// not overlap: whether they mix kept frames depends on scheduling.
	"chunk-dependent": {"P31/concurrent/matches-sequential"},
}

// CrashAt is the frame index at which crash-mid-stream dies: only the
// many-frames case streams that far.
const CrashAt = 100

// Plugins returns every broken plugin. crash is what crash-mid-stream
// calls to die: os.Exit in a binary, a panic in-process.
func Plugins(crash func()) map[string]sdk.Plugin {
	return map[string]sdk.Plugin{
		"caps-drift":           capsDrift(),
		"long-description":     pipe("long-description", basic{Caps: gateway.Capabilities{Description: strings.Repeat("Too long. ", 9)}}),
		"undeclared-write":     pipe("undeclared-write", writer{basic{Caps: gateway.Capabilities{ReadsBody: true, Description: "Writes the response body without declaring it"}}}),
		"allow-at-tool-before": ext("allow-at-tool-before", func(p intercept.Point) intercept.Answer { return intercept.Allow("looks fine") }),
		"replace-unknown-field": ext("replace-unknown-field", func(p intercept.Point) intercept.Answer {
			return intercept.Answer{Decision: intercept.DecisionReplace, Replacement: json.RawMessage(`{"name":"bash","arguments":"{}","bogus":1}`)}
		}),
		"slow-finish":             pipe("slow-finish", slowFinish{basic{Caps: gateway.Capabilities{Description: "Finishes slowly, ignoring its deadline"}}}),
		"chunk-dependent":         pipe("chunk-dependent", &keeper{basic: basic{Caps: gateway.Capabilities{Description: "Parses frames it kept without copying"}}}),
		"crash-mid-stream":        pipe("crash-mid-stream", crasher{basic{Caps: gateway.Capabilities{Description: "Dies in the middle of a long stream"}}, crash}),
		"hang":                    pipe("hang", hanger{basic{Caps: gateway.Capabilities{Description: "Never answers a readiness check"}}}),
		"framing-header":          pipe("framing-header", framer{basic{Caps: gateway.Capabilities{Description: "Sets a request's Content-Length itself"}}}),
		"late-header":             pipe("late-header", lateHeader{basic{Caps: gateway.Capabilities{Description: "Changes response headers in every frame"}}}),
		"long-bundle-description": longBundleDescription(),
		"silent-parser": pipe("silent-parser", basic{Caps: gateway.Capabilities{ReadsBody: true, Description: "Declares the inference extension and never writes it",
			Extensions: []gateway.ExtensionSpec{{Key: "inference", Writes: true, Schema: json.RawMessage(`{"type":"object"}`)}}}}),
		"describe-writes": describeWrites(),
		"describe-stream": describeStream(),
		"forks-child":     pipe("forks-child", basic{Caps: gateway.Capabilities{Description: "Starts a helper process as a binary"}}),
		// forks-session honours every rule; as a binary it forks a
		// sleeper into a session of its own and a daemon (a new session
		// whose leader exits at once), which killing its process group
		// misses. Not in Expect: only a host that is the child subreaper
		// of its plugins (conformance, abctl) kills those, so the suites
		// of this package would leak them; its test runs conformance.
		"forks-session": pipe("forks-session", basic{Caps: gateway.Capabilities{Description: "Forks into sessions of its own as a binary"}}),
		// escape-stdout and escape-panic are not in Expect either: as a
		// binary, escape-stdout writes Escapes to stdout before its
		// handshake (which fails), and escape-panic panics with them in
		// every OnRequest, which in-process would take the test down. Their
		// test runs conformance on them: what it prints holds no raw
		// control byte.
		"escape-stdout": pipe("escape-stdout", basic{Caps: gateway.Capabilities{Description: "Writes escape sequences before its handshake"}}),
		"escape-panic":  pipe("escape-panic", panicker{basic{Caps: gateway.Capabilities{Description: "Panics with escape sequences in its message"}}}),
		// slow-request is not in Expect: whether it fails P15 for its
		// time or for a deadline depends on the host's call timeout, which
		// its own test sets (TestDeadlineOverrunWording).
		"slow-request": pipe("slow-request", slowRequest{basic{Caps: gateway.Capabilities{Description: "Never answers OnRequest for /mcp"}}}),
	}
}

// Escapes are what escape-stdout and escape-panic write: a window title,
// a screen clear and a colour (which once cleared the operator's terminal
// and set its title), an 8-bit CSI (a C1 control, U+009B), a carriage
// return, a backspace and a bell.
const Escapes = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\u009b0m\r\x08\x07"

// panicker panics in OnRequest with Escapes in the panic's message: the
// SDK recovers that panic and answers with its text, except for /mcp,
// where it panics on a goroutine of its own, which no one recovers: the
// process dies with the panic text and a stack on its stderr.
type panicker struct{ basic }

func (panicker) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	msg := "escape-panic: " + Escapes + " on purpose"
	if ex.Request.URL == "/mcp" {
		done := make(chan struct{})
		go func() { defer close(done); panic(msg + ", crashing") }()
		<-done
	}
	panic(msg)
}

// slowRequest does not answer OnRequest for /mcp for a minute, ignoring
// ctx: a call timeout shorter than that ends the call as a deadline
// overrun.
type slowRequest struct{ basic }

func (slowRequest) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	if ex.Request.URL == "/mcp" {
		time.Sleep(time.Minute)
	}
	return gateway.Continue()
}

// longBundleDescription has a 90-rune bundle description (P5): sdk.Serve
// warns and serves it, so only P5/description/plugin fails.
func longBundleDescription() sdk.Plugin {
	p := pipe("long-bundle-description", basic{Caps: gateway.Capabilities{Description: "Describes itself at length"}})
	p.Description = strings.Repeat("Too long. ", 9)
	return p
}

func pipe(name string, p gateway.Plugin) sdk.Plugin {
	f := gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) { return named(name, p), nil }}
	return sdk.Plugin{Name: name, Description: "A broken plugin for the conformance suite's tests", Pipeline: &f}
}

// named sets the name on the basic part of p.
func named(name string, p gateway.Plugin) gateway.Plugin {
	switch x := p.(type) {
	case basic:
		x.ID = name
		return x
	case writer:
		x.ID = name
		return x
	case slowFinish:
		x.ID = name
		return x
	case *keeper:
		return &keeper{basic: basic{ID: name, Caps: x.Caps}}
	case crasher:
		x.ID = name
		return x
	case hanger:
		x.ID = name
		return x
	case slowRequest:
		x.ID = name
		return x
	case panicker:
		x.ID = name
		return x
	case framer:
		x.ID = name
		return x
	case lateHeader:
		x.ID = name
		return x
	}
	return p
}

// basic is the pass-through base each broken plugin embeds.
type basic = passthrough.Plugin

// capsDrift reports reads_body on every second instance and numbers its
// capability description (P2). The number makes any two instances differ:
// with parity alone, a Describe whose two probe instances had another
// goroutine's instance made between them (in-process runs describe on
// several goroutines at once) saw two that agreed.
func capsDrift() sdk.Plugin {
	var n atomic.Int64
	f := gateway.Factory{Name: "caps-drift", New: func(json.RawMessage) (gateway.Plugin, error) {
		i := n.Add(1)
		return basic{ID: "caps-drift", Caps: gateway.Capabilities{ReadsBody: i%2 == 0,
			Description: fmt.Sprintf("Capabilities change from one instance to the next (instance %d)", i)}}, nil
	}}
	return sdk.Plugin{Name: "caps-drift", Description: "A broken plugin for the conformance suite's tests", Pipeline: &f}
}

// writer writes the response body without writes_response_body (P17).
type writer struct{ basic }

// framer changes a framing header, which is the host's (P32).
type framer struct{ basic }

func (framer) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	ex.Request.Header.Set("Content-Length", "1")
	return gateway.Continue()
}

// lateHeader changes a response header in every frame call, also after
// the head went out (P33).
type lateHeader struct{ basic }

func (lateHeader) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	if !last {
		ex.Response.Header.Set("X-Frame-Bytes", strconv.Itoa(len(frame)+len(ex.Response.Header.Get("X-Frame-Bytes"))))
	}
	return gateway.Continue()
}

func (writer) OnResponse(_ context.Context, ex *gateway.Exchange) gateway.Action {
	ex.SetResponseBody([]byte("rewritten"))
	return gateway.Continue()
}

// slowFinish ignores its finish deadline (P28).
type slowFinish struct{ basic }

func (slowFinish) OnFinish(context.Context, *gateway.Exchange) error {
	time.Sleep(1500 * time.Millisecond)
	return nil
}

// keeper keeps the frame slices it is lent and parses them at the end
// (P24), so its result depends on what the buffers hold by then.
type keeper struct {
	basic
	kept [][]byte
}

func (k *keeper) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	if !last {
		k.kept = append(k.kept, frame) // the bug: no copy
		return gateway.Continue()
	}
	var b strings.Builder
	for _, f := range k.kept {
		b.Write(f)
	}
	k.kept = k.kept[:0]
	ex.SetExtension("kept", b.String())
	return gateway.Continue()
}

// crasher dies at frame CrashAt.
type crasher struct {
	basic
	crash func()
}

type frameCount struct{ n int }

var countKey = gateway.NewKey[*frameCount]("crash-mid-stream")

func (c crasher) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	fc, ok := gateway.GetState(ex, countKey)
	if !ok {
		fc = &frameCount{}
		gateway.SetState(ex, countKey, fc)
	}
	if !last {
		if fc.n == CrashAt {
			c.crash()
		}
		fc.n++
	}
	return gateway.Continue()
}

// hanger never answers Ready and ignores ctx.
type hanger struct{ basic }

func (hanger) Ready(context.Context) error { select {} }

func ext(name string, at func(intercept.Point) intercept.Answer) sdk.Plugin {
	m := intercept.Manifest{PluginID: name, Points: []intercept.Point{intercept.ToolBefore, intercept.ToolAfter}}
	e := intercept.Funcs{CallFunc: func(_ context.Context, p intercept.Point, _ json.RawMessage) (intercept.Answer, error) {
		if p == intercept.ToolBefore {
			return at(p), nil
		}
		return intercept.Continue(), nil
	}}
	return sdk.Plugin{Name: name, Description: "A broken extension for the conformance suite's tests",
		Extension: &sdk.Extension{Manifest: m, New: func() (intercept.Extension, error) { return e, nil }}}
}

// describing reports whether the caller is making a probe instance for
// Describe (the SDK's server, or the suite's in-process Describe): the two
// plugins below answer Describe's probe one way and every later
// NewInstance another, as a plugin whose Describe answer is written by hand
// and out of date does.
func describing() bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, "pluginserver.(*Server).describe") || strings.HasSuffix(f.Function, "conformance.DescribeSDK") {
			return true
		}
		if !more {
			return false
		}
	}
}

// describeWrites reports writes_response_body in NewInstance but not in
// Describe (P2).
func describeWrites() sdk.Plugin {
	f := gateway.Factory{Name: "describe-writes", New: func(json.RawMessage) (gateway.Plugin, error) {
		c := gateway.Capabilities{Description: "Describe leaves out that it writes the response body"}
		if !describing() {
			c.WritesResponseBody, c.ReadsBody = true, true
		}
		return basic{ID: "describe-writes", Caps: c}, nil
	}}
	return sdk.Plugin{Name: "describe-writes", Description: "A broken plugin for the conformance suite's tests", Pipeline: &f}
}

// describeStream lists the stream behaviour in Describe, but the
// instances NewInstance makes take no frames (P2).
func describeStream() sdk.Plugin {
	caps := gateway.Capabilities{Description: "Describe says it streams; its instances do not"}
	f := gateway.Factory{Name: "describe-stream", New: func(json.RawMessage) (gateway.Plugin, error) {
		if describing() {
			return streamer{basic{ID: "describe-stream", Caps: caps}}, nil
		}
		return basic{ID: "describe-stream", Caps: caps}, nil
	}}
	return sdk.Plugin{Name: "describe-stream", Description: "A broken plugin for the conformance suite's tests", Pipeline: &f}
}

// streamer passes every frame on.
type streamer struct{ basic }

func (streamer) OnResponseFrame(context.Context, *gateway.Exchange, []byte, bool) gateway.Action {
	return gateway.Continue()
}
