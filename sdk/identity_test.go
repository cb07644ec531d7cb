package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// anon leaves its identity to the bundle: Name() and the description are "".
type anon struct{ name string }

func (a anon) Name() string                     { return a.name }
func (anon) Capabilities() gateway.Capabilities { return gateway.Capabilities{ReadsBody: true} }
func (anon) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (anon) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (anon) OnFinish(context.Context, *gateway.Exchange) error { return nil }

func TestPipelinePluginFillsIdentity(t *testing.T) {
	p := sdk.PipelinePlugin("anon", "Leaves its name and description to the bundle", gateway.Factory{
		New: func(json.RawMessage) (gateway.Plugin, error) { return anon{}, nil },
	})
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Pipeline.Name != "anon" {
		t.Errorf("Pipeline.Name = %q, want the bundle's", p.Pipeline.Name)
	}
	inst, err := p.Pipeline.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Name() != "anon" || inst.Capabilities().Description != p.Description || !inst.Capabilities().ReadsBody {
		t.Errorf("instance reports %q %+v", inst.Name(), inst.Capabilities())
	}
	if got := gateway.Behaviours(inst); !slices.Equal(got, []string{gateway.BehaviourFinish}) {
		t.Errorf("behaviours %v, want the instance's own [finish]", got)
	}
}

func TestPipelinePluginKeepsCompleteInstance(t *testing.T) {
	p := sdk.PipelinePlugin("anon", "d", gateway.Factory{
		New: func(json.RawMessage) (gateway.Plugin, error) { return fullName{}, nil },
	})
	inst, err := p.Pipeline.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := inst.(fullName); !ok {
		t.Errorf("an instance that reports its identity was wrapped: %T", inst)
	}
}

type fullName struct{ anon }

func (fullName) Name() string { return "anon" }
func (fullName) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "its own"}
}

func TestPipelinePluginRefusesOtherName(t *testing.T) {
	p := sdk.PipelinePlugin("anon", "d", gateway.Factory{
		New: func(json.RawMessage) (gateway.Plugin, error) { return anon{name: "other"}, nil },
	})
	if _, err := p.Pipeline.New(nil); err == nil || !strings.Contains(err.Error(), `"other"`) || !strings.Contains(err.Error(), `"anon"`) {
		t.Errorf("err = %v, want both names", err)
	}
	q := sdk.PipelinePlugin("anon", "d", gateway.Factory{Name: "other", New: p.Pipeline.New})
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "Pipeline.Name") {
		t.Errorf("Validate = %v, want the factory name mismatch", err)
	}
}

// The name and the description are written once.
func ExamplePipelinePlugin() {
	p := sdk.PipelinePlugin("anon", "Leaves its name and description to the bundle", gateway.Factory{
		New: func(json.RawMessage) (gateway.Plugin, error) { return anon{}, nil },
	})
	inst, _ := p.Pipeline.New(nil)
	fmt.Println(p.Pipeline.Name, inst.Name(), inst.Capabilities().Description)
	// Output: anon anon Leaves its name and description to the bundle
}
