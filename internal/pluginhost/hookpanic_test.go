package pluginhost_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/hookbus"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/hooks"
)

// serveHookPanicHelper serves a plugin whose fail-open submit hook panics,
// followed by one that stamps the request, for TestRemoteHookPanic_H3.
func serveHookPanicHelper(mode string) bool {
	if mode != "hook-panic" {
		return false
	}
	panicky := hooks.NewSubmitHook(hooks.Spec{ID: "panicky", Order: 1, Policy: hooks.PolicyFailOpen},
		func(context.Context, *hooks.Submit) error { panic("hook bug on purpose") })
	stamp := hooks.NewSubmitHook(hooks.Spec{ID: "stamp", Order: 2},
		func(_ context.Context, s *hooks.Submit) error { s.Model = "stamped"; return nil })
	sdk.Serve(sdk.Plugin{Name: "hook-panic", Description: "A submit hook that panics, then one that stamps",
		Hooks: &sdk.HookSet{Submit: []hooks.SubmitHook{panicky, stamp}}})
	return true
}

// TestRemoteHookPanic_H3: a hook that panics in its plugin process reaches
// the bus as the same *hookbus.PanicError an in-process panic makes (its
// value the plugin's panic, its stack the plugin's), so the hook's policy
// applies (fail-open: the chain goes on) and nothing panics in the host.
func TestRemoteHookPanic_H3(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := pluginhost.Load(context.Background(), self, helperOpts("hook-panic"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	submit, _, _ := p.Hooks()
	bus, err := hookbus.New(hookbus.Config{Submit: submit})
	if err != nil {
		t.Fatal(err)
	}
	res, err := bus.RunSubmit(context.Background(), &hooks.Submit{Model: "m"})
	if err != nil {
		t.Fatalf("RunSubmit: %v: a fail-open hook's panic must not end the chain", err)
	}
	if res.Submit == nil || res.Submit.Model != "stamped" {
		t.Fatalf("submit after the chain %+v: the hook after the panicking one did not run", res.Submit)
	}
	if len(res.Errors) != 1 {
		t.Fatalf("errors %v: want the one panic", res.Errors)
	}
	var pe *hookbus.PanicError
	if !errors.As(res.Errors[0], &pe) {
		t.Fatalf("error %T %v: want a *hookbus.PanicError", res.Errors[0], res.Errors[0])
	}
	rp, ok := pe.Value.(*pluginhost.RemotePanic)
	if !ok {
		t.Fatalf("error %T %v: want a *hookbus.PanicError holding a *pluginhost.RemotePanic", res.Errors[0], res.Errors[0])
	}
	if rp.Value != "hook bug on purpose" || !strings.Contains(string(pe.Stack), "serveHookPanicHelper") {
		t.Errorf("panic value %q, stack:\n%s\nwant the plugin's value and its stack", rp.Value, pe.Stack)
	}
	if got := res.Errors[0].Error(); !strings.Contains(got, `"panicky"`) || !strings.Contains(got, "panic: hook bug on purpose") {
		t.Errorf("error %q does not name the hook and the panic", got)
	}
}
