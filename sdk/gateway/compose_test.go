package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

type basePlugin struct{}

func (basePlugin) Name() string { return "base" }
func (basePlugin) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "a plugin whose behaviours are chosen at run time"}
}
func (basePlugin) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (basePlugin) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// fullPlugin has every optional behaviour.
type fullPlugin struct {
	basePlugin
	calls *[]string
}

func (p fullPlugin) Init(context.Context) error { *p.calls = append(*p.calls, "init"); return nil }
func (p fullPlugin) Shutdown(context.Context) error {
	*p.calls = append(*p.calls, "shutdown")
	return nil
}
func (p fullPlugin) Ready(context.Context) error { *p.calls = append(*p.calls, "ready"); return nil }
func (p fullPlugin) OnFinish(context.Context, *gateway.Exchange) error {
	*p.calls = append(*p.calls, "finish")
	return nil
}
func (p fullPlugin) OnResponseFrame(context.Context, *gateway.Exchange, []byte, bool) gateway.Action {
	*p.calls = append(*p.calls, "stream")
	return gateway.Continue()
}

// Every one of the 32 combinations gives exactly its behaviours, each
// calling its own function, and the base's methods.
func TestComposeEveryCombination(t *testing.T) {
	ctx := context.Background()
	names := []string{gateway.BehaviourInit, gateway.BehaviourShutdown, gateway.BehaviourFinish, gateway.BehaviourStream, gateway.BehaviourReady}
	for mask := range 32 {
		var calls []string
		all := gateway.OptionalOf(fullPlugin{calls: &calls})
		var o gateway.Optional
		var want []string
		for i, name := range names {
			if mask&(1<<i) == 0 {
				continue
			}
			want = append(want, name)
			switch name {
			case gateway.BehaviourInit:
				o.Init = all.Init
			case gateway.BehaviourShutdown:
				o.Shutdown = all.Shutdown
			case gateway.BehaviourFinish:
				o.Finish = all.Finish
			case gateway.BehaviourStream:
				o.Frame = all.Frame
			case gateway.BehaviourReady:
				o.Ready = all.Ready
			}
		}
		slices.Sort(want)
		p := gateway.Compose(basePlugin{}, o)
		if got := gateway.Behaviours(p); !slices.Equal(got, want) {
			t.Errorf("mask %05b: behaviours %v, want %v", mask, got, want)
		}
		if p.Name() != "base" || !p.OnRequest(ctx, nil).IsContinue() {
			t.Errorf("mask %05b: base methods not carried", mask)
		}
		if b, ok := p.(interface{ Base() gateway.Plugin }); !ok || b.Base() != (basePlugin{}) {
			t.Errorf("mask %05b: Base() does not return the base", mask)
		}
		if x, ok := p.(gateway.Initializer); ok {
			_ = x.Init(ctx)
		}
		if x, ok := p.(gateway.Shutdowner); ok {
			_ = x.Shutdown(ctx)
		}
		if x, ok := p.(gateway.Finisher); ok {
			_ = x.OnFinish(ctx, nil)
		}
		if x, ok := p.(gateway.StreamingResponder); ok {
			x.OnResponseFrame(ctx, nil, nil, true)
		}
		if x, ok := p.(gateway.Readier); ok {
			_ = x.Ready(ctx)
		}
		slices.Sort(calls)
		if !slices.Equal(calls, want) {
			t.Errorf("mask %05b: called %v, want %v", mask, calls, want)
		}
	}
}

// A base's own behaviours are not carried over unless named.
func TestComposeDropsUnnamedBehaviours(t *testing.T) {
	var calls []string
	full := fullPlugin{calls: &calls}
	if got := gateway.Behaviours(gateway.Compose(full, gateway.Optional{})); len(got) != 0 {
		t.Errorf("Compose(full, {}) has %v, want none", got)
	}
	if got, want := gateway.Behaviours(gateway.Compose(full, gateway.OptionalOf(full))), gateway.Behaviours(full); !slices.Equal(got, want) {
		t.Errorf("Compose(full, OptionalOf(full)) has %v, want %v", got, want)
	}
}

// An adapter decides at run time which behaviours its plugin has, here
// from what the wrapped foreign plugin says it supports.
func ExampleCompose() {
	supports := map[string]bool{"init": true, "stream": true} // known only at run time
	var o gateway.Optional
	if supports["init"] {
		o.Init = func(context.Context) error { return nil }
	}
	if supports["stream"] {
		o.Frame = func(_ context.Context, _ *gateway.Exchange, frame []byte, last bool) gateway.Action {
			return gateway.Continue()
		}
	}
	p := gateway.Compose(basePlugin{}, o)
	_, isFinisher := p.(gateway.Finisher)
	fmt.Println(gateway.Behaviours(p), isFinisher)
	// Output: [init stream] false
}
