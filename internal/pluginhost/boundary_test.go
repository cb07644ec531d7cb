package pluginhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/abkit/abkit/internal/hookbus"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/pluginserver"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
)

// finishProbe is a finisher that reports, on stderr, what each hook saw of
// its context and of the exchange's outcome (P28, P29).
type finishProbe struct{}

func (finishProbe) Name() string { return "finish-probe" }
func (finishProbe) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Reports the context and outcome each hook sees"}
}

func report(hook string, ctx context.Context, ex *gateway.Exchange) {
	dl, hasDL := ctx.Deadline()
	o, ok := ex.Outcome()
	fmt.Fprintf(os.Stderr, "probe hook=%s deadline=%t left_ms=%d ctx_err=%v outcome=%t kind=%s status=%d denied_by=%s\n",
		hook, hasDL, time.Until(dl).Milliseconds(), ctx.Err(), ok, o.Kind, o.Status, o.DeniedBy)
}

func (finishProbe) OnRequest(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	report("on_request", ctx, ex)
	return gateway.Continue()
}

func (finishProbe) OnResponse(ctx context.Context, ex *gateway.Exchange) gateway.Action {
	report("on_response", ctx, ex)
	return gateway.Continue()
}

func (finishProbe) OnResponseFrame(ctx context.Context, ex *gateway.Exchange, _ []byte, _ bool) gateway.Action {
	report("frame", ctx, ex)
	return gateway.Continue()
}

func (finishProbe) OnFinish(ctx context.Context, ex *gateway.Exchange) error {
	report("on_finish", ctx, ex)
	return nil
}

// leaky is not a finisher: when a later plugin denies an exchange it never
// hears of it again, so the host must release its state.
type leaky struct{}

func (leaky) Name() string { return "leaky" }
func (leaky) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Keeps per-exchange state and never finishes"}
}
func (leaky) OnRequest(context.Context, *gateway.Exchange) gateway.Action  { return gateway.Continue() }
func (leaky) OnResponse(context.Context, *gateway.Exchange) gateway.Action { return gateway.Continue() }

// partHooks are family H part hooks run both in-process and out of process.
func partHooks() []hooks.PartHook {
	return []hooks.PartHook{
		hooks.NewPartHook(hooks.Spec{ID: "redact", Order: 1, Kind: hooks.KindRequestPart},
			func(_ context.Context, p hooks.Part) (hooks.Part, error) {
				p.Data = json.RawMessage(strings.ReplaceAll(string(p.Data), "secret", "[redacted]"))
				return p, nil
			}),
		hooks.NewPartHook(hooks.Spec{ID: "picky", Order: 2, Kind: hooks.KindRequestPart, Policy: hooks.PolicyFailOpen},
			func(_ context.Context, p hooks.Part) (hooks.Part, error) {
				if p.Type == "image" {
					return hooks.Part{}, errors.New("images are not looked at")
				}
				return p, nil
			}),
		hooks.NewPartHook(hooks.Spec{ID: "retype", Order: 1, Kind: hooks.KindResponsePart},
			func(_ context.Context, p hooks.Part) (hooks.Part, error) {
				if p.Type == "ping" {
					p.Type, p.Data = "keepalive", nil
				}
				return p, nil
			}),
		hooks.NewPartHook(hooks.Spec{ID: "strict", Order: 2, Kind: hooks.KindResponsePart, Policy: hooks.PolicyFailClosed},
			func(_ context.Context, p hooks.Part) (hooks.Part, error) {
				if p.Type == "error" {
					return hooks.Part{}, errors.New("upstream sent an error event")
				}
				return p, nil
			}),
	}
}

// serveBoundaryHelper serves the helper modes of this file; it reports
// false for other modes.
func serveBoundaryHelper(mode string) bool {
	factory := func(name string, p gateway.Plugin) *gateway.Factory {
		return &gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) { return p, nil }}
	}
	switch mode {
	case "finish-probe":
		sdk.Serve(sdk.Plugin{Name: "finish-probe", Description: "Reports the context and outcome each hook sees",
			Pipeline: factory("finish-probe", finishProbe{})})
	case "parts":
		sdk.Serve(sdk.Plugin{Name: "parts", Description: "Part hooks for the equivalence test",
			Hooks: &sdk.HookSet{Parts: partHooks()}})
	case "leaky":
		// The submit hook answers with the server's live exchange count in
		// Model, so the test can read it across the boundary.
		var srv *pluginserver.Server
		count := hooks.NewSubmitHook(hooks.Spec{ID: "count"}, func(_ context.Context, s *hooks.Submit) error {
			s.Model = strconv.Itoa(srv.Exchanges())
			return nil
		})
		srv = testServer(sdk.Plugin{Name: "leaky", Description: "Keeps per-exchange state and never finishes",
			Pipeline: factory("leaky", leaky{}), Hooks: &sdk.HookSet{Submit: []hooks.SubmitHook{count}}})
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: sdk.Handshake(),
			VersionedPlugins: map[int]plugin.PluginSet{sdk.ProtocolVersion: {sdk.PluginSetName: pluginserver.GRPCPlugin{Impl: srv}}},
			GRPCServer:       plugin.DefaultGRPCServer})
	default:
		return false
	}
	return true
}

func loadMode(t *testing.T, mode string) *pluginhost.Plugin {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := pluginhost.Load(context.Background(), self, pluginhost.Options{Env: []string{helperEnv + "=" + mode}})
	if err != nil {
		t.Fatalf("load %s: %v", mode, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// canceller is an in-process plugin that cancels the request context in
// OnRequest and, when deny is set, denies the exchange.
type canceller struct {
	cancel func()
	deny   bool
}

func (canceller) Name() string { return "canceller" }
func (canceller) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Cancels the request context"}
}
func (c *canceller) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	c.cancel()
	if c.deny {
		return gateway.Reject(403, "no")
	}
	return gateway.Continue()
}
func (canceller) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// probeLines waits until the plugin's stderr holds n probe lines and returns
// them.
func probeLines(t *testing.T, p *pluginhost.Plugin, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var lines []string
		for _, l := range strings.Split(p.Stderr(), "\n") {
			if strings.HasPrefix(l, "probe ") {
				lines = append(lines, l)
			}
		}
		if len(lines) >= n || time.Now().After(deadline) {
			if len(lines) != n {
				t.Fatalf("%d probe lines, want %d:\n%s\nstderr:\n%s", len(lines), n, strings.Join(lines, "\n"), p.Stderr())
			}
			return lines
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// OnFinish across the boundary gets a fresh context with the host's finish
// deadline, not cancelled although the request context was (P28), and sees
// the outcome, which OnRequest, OnResponse and frames do not (P29).
func TestFinishContextAndOutcomeAcrossBoundary_P28_P29(t *testing.T) {
	cases := []struct {
		name string
		deny bool
		up   pipeline.Upstream
		want []string // the probe lines, without left_ms
	}{
		{"denied by a later plugin", true, pipeline.Upstream{Status: 200}, []string{
			"probe hook=on_request deadline=true ctx_err=<nil> outcome=false kind=none status=0 denied_by=",
			"probe hook=on_finish deadline=true ctx_err=<nil> outcome=true kind=deny status=403 denied_by=canceller",
		}},
		{"allowed, streamed", false, sse("data: one\n\ndata: two\n\n"), []string{
			"probe hook=on_request deadline=true ctx_err=<nil> outcome=false kind=none status=0 denied_by=",
			// A frame's bound is enforced host-side on the stream (the call
			// timeout per frame), so the plugin's frame context has none.
			"probe hook=frame deadline=false ctx_err=<nil> outcome=false kind=none status=0 denied_by=",
			"probe hook=frame deadline=false ctx_err=<nil> outcome=false kind=none status=0 denied_by=",
			"probe hook=frame deadline=false ctx_err=<nil> outcome=false kind=none status=0 denied_by=",
			"probe hook=on_finish deadline=true ctx_err=<nil> outcome=true kind=allow status=200 denied_by=",
		}},
	}
	const finishTimeout = 1500 * time.Millisecond
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := loadMode(t, "finish-probe")
			f, _ := p.Factory()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The request context is cancelled (the client went away) only
			// on the denied exchange: with a cancelled request context the
			// adapter cannot make the frame calls (see the report).
			cancelReq := func() {}
			if c.deny {
				cancelReq = cancel
			}
			cf := gateway.Factory{Name: "canceller", New: func(json.RawMessage) (gateway.Plugin, error) {
				return &canceller{cancel: cancelReq, deny: c.deny}, nil
			}}
			ch, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{{Plugin: f.Name}, {Plugin: "canceller"}}},
				[]gateway.Factory{f, cf}, pipeline.Options{FinishTimeout: finishTimeout})
			if err != nil {
				t.Fatal(err)
			}
			res := ch.Run(ctx, pipeline.Request{Request: gateway.Request{Method: "POST", URL: "/v1/chat"}}, c.up, pipeline.ExchangeOptions{})
			if res.Err != nil {
				t.Fatalf("run: %v", res.Err)
			}
			lines := probeLines(t, p, len(c.want))
			var got []string
			for _, l := range lines {
				i := strings.Index(l, " left_ms=")
				j := strings.Index(l, " ctx_err=")
				if strings.Contains(l, "hook=on_finish") {
					// The finish deadline crossed the boundary: at most the
					// host's FinishTimeout away, and not passed.
					ms, _ := strconv.Atoi(l[i+len(" left_ms=") : j])
					if ms <= 0 || ms > int(finishTimeout.Milliseconds()) {
						t.Errorf("OnFinish deadline %d ms away, want within (0, %d] (P28)", ms, finishTimeout.Milliseconds())
					}
				}
				got = append(got, l[:i]+l[j:])
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("probe lines\n got: %q\nwant: %q", got, c.want)
			}
		})
	}
}

// The same part hooks give identical results and traces on the hook bus
// in-process and out of process (family H request_part, response_part; H2,
// H3).
func TestPartHooksSameInAndOutOfProcess_H2_H3(t *testing.T) {
	_, remote, _ := loadMode(t, "parts").Hooks()
	if len(remote) != 4 {
		t.Fatalf("%d remote part hooks, want 4", len(remote))
	}
	run := func(parts []hooks.PartHook) []any {
		rec := trace.NewRecorder()
		b, err := hookbus.New(hookbus.Config{Parts: parts, Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		var out []any
		for _, c := range []struct {
			kind hooks.Kind
			p    hooks.Part
		}{
			{hooks.KindRequestPart, hooks.Part{Index: 0, Type: "text", Data: json.RawMessage(`"my secret is 42"`)}},
			{hooks.KindRequestPart, hooks.Part{Index: 1, Type: "image", Data: json.RawMessage(`{"url":"x"}`)}},
			{hooks.KindResponsePart, hooks.Part{Index: 0, Type: "ping", Data: json.RawMessage(`{}`)}},
			{hooks.KindResponsePart, hooks.Part{Index: 1, Type: "content_block_delta", Data: json.RawMessage(`{"text":"hi"}`)}},
			{hooks.KindResponsePart, hooks.Part{Index: 2, Type: "error", Data: json.RawMessage(`{"message":"overloaded"}`)}},
		} {
			res, err := b.RunPart(context.Background(), c.kind, c.p)
			var errs []string
			for _, e := range res.Errors {
				errs = append(errs, e.Error())
			}
			out = append(out, res.Part, errs, errString(err))
		}
		return append(out, trace.WithoutDurations(rec.Events()))
	}
	in, out := run(partHooks()), run(remote)
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("differs\nin-process:  %+v\nout-of-proc: %+v", in, out)
	}
}
