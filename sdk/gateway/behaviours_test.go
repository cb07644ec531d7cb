package gateway

import (
	"context"
	"slices"
	"testing"
)

type basePlugin struct{}

func (basePlugin) Name() string                                                    { return "p" }
func (basePlugin) Capabilities() Capabilities                                      { return Capabilities{Description: "p"} }
func (basePlugin) OnRequest(context.Context, *Exchange) Action                     { return Continue() }
func (basePlugin) OnResponse(context.Context, *Exchange) Action                    { return Continue() }
func (basePlugin) OnResponseFrame(context.Context, *Exchange, []byte, bool) Action { return Continue() }

type allPlugin struct{ basePlugin }

func (allPlugin) Init(context.Context) error                { return nil }
func (allPlugin) Shutdown(context.Context) error            { return nil }
func (allPlugin) OnFinish(context.Context, *Exchange) error { return nil }
func (allPlugin) Ready(context.Context) error               { return nil }

type plainPlugin struct{}

func (plainPlugin) Name() string                                 { return "plain" }
func (plainPlugin) Capabilities() Capabilities                   { return Capabilities{Description: "plain"} }
func (plainPlugin) OnRequest(context.Context, *Exchange) Action  { return Continue() }
func (plainPlugin) OnResponse(context.Context, *Exchange) Action { return Continue() }

// P12–P14, P19, P26: the optional behaviours a plugin implements, by the
// names catalogs, the protocol and conformance reports share, sorted.
func TestBehaviours(t *testing.T) {
	for _, c := range []struct {
		p    Plugin
		want []string
	}{
		{plainPlugin{}, nil},
		{basePlugin{}, []string{BehaviourStream}},
		{allPlugin{}, []string{BehaviourFinish, BehaviourInit, BehaviourReady, BehaviourShutdown, BehaviourStream}},
	} {
		got := Behaviours(c.p)
		if !slices.Equal(got, c.want) {
			t.Errorf("Behaviours(%T) = %v, want %v", c.p, got, c.want)
		}
		if !slices.IsSorted(got) {
			t.Errorf("Behaviours(%T) = %v, not sorted", c.p, got)
		}
	}
}
