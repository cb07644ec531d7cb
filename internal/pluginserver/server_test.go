package pluginserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/pluginserver"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
)

type finisher struct{}

func (finisher) Name() string { return "fin" }
func (finisher) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Finishes", WritesResponseBody: true}
}
func (finisher) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (finisher) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (finisher) OnFinish(context.Context, *gateway.Exchange) error { return nil }

// TestServesBadDescription_P5: a bundle description of 90 runes is
// served as is, so Describe shows hosts what they must judge.
func TestServesBadDescription_P5(t *testing.T) {
	long := strings.Repeat("é", 90)
	s := pluginserver.NewServer(pluginserver.Bundle{Name: "fin", Description: long,
		Pipeline: &gateway.Factory{Name: "fin", New: func(json.RawMessage) (gateway.Plugin, error) { return finisher{}, nil }}})
	d, err := s.Describe(context.Background(), &abkitv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d.GetDescription() != long {
		t.Errorf("description %q, want the bundle's own", d.GetDescription())
	}
}

func TestDescribe(t *testing.T) {
	s := pluginserver.NewServer(pluginserver.Bundle{
		Name: "fin", Description: "Finishes",
		Pipeline: &gateway.Factory{Name: "fin", New: func(json.RawMessage) (gateway.Plugin, error) { return finisher{}, nil }},
		Hooks: &pluginserver.Hooks{Submit: []hooks.SubmitHook{hooks.NewSubmitHook(hooks.Spec{ID: "s", Order: 3},
			func(context.Context, *hooks.Submit) error { return nil })}},
	})
	d, err := s.Describe(context.Background(), &abkitv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.GetFamilies(), []string{"P", "H"}) {
		t.Errorf("families %v", d.GetFamilies())
	}
	if !reflect.DeepEqual(d.GetPipeline().GetBehaviours(), []string{"finish"}) {
		t.Errorf("behaviours %v", d.GetPipeline().GetBehaviours())
	}
	if c := d.GetPipeline().GetCapabilities(); !c.GetWritesResponseBody() || c.GetReadsBody() {
		t.Errorf("capabilities %+v: want them as reported, not normalised", c)
	}
	if len(d.GetPipeline().GetObserved()) != 2 {
		t.Errorf("observed %d instances, want 2 (P2)", len(d.GetPipeline().GetObserved()))
	}
	if h := d.GetHooks(); len(h) != 1 || h[0].GetId() != "s" || h[0].GetKind() != "submit" || h[0].GetOrder() != 3 {
		t.Errorf("hooks %+v", h)
	}
}

// TestDescribeNeedsConfig_P2: a plugin that refuses no config and the schema's
// defaults is described with the sample config, so its capabilities and
// both P2 observations reach the host instead of a probe error.
func TestDescribeNeedsConfig_P2(t *testing.T) {
	var seen []string
	s := pluginserver.NewServer(pluginserver.Bundle{
		Name: "fin", Description: "Finishes",
		Pipeline: &gateway.Factory{Name: "fin",
			Config: &gateway.ConfigSchema{Fields: []gateway.Field{{Name: "target", Type: "string", Required: true}}},
			New: func(cfg json.RawMessage) (gateway.Plugin, error) {
				seen = append(seen, string(cfg))
				var c struct{ Target string }
				if len(cfg) > 0 {
					if err := json.Unmarshal(cfg, &c); err != nil {
						return nil, err
					}
				}
				if c.Target == "" {
					return nil, errors.New("target is required")
				}
				return finisher{}, nil
			}},
	})
	d, err := s.Describe(context.Background(), &abkitv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	pi := d.GetPipeline()
	if pi.GetProbeError() != "" || pi.GetCapabilities() == nil || pi.GetCapabilities().GetDescription() != "Finishes" {
		t.Errorf("probe error %q, capabilities %+v: want the capabilities of a sample-config instance", pi.GetProbeError(), pi.GetCapabilities())
	}
	if len(pi.GetObserved()) != 2 {
		t.Errorf("observed %d instances, want 2 (P2)", len(pi.GetObserved()))
	}
	want := []string{"", "{}", `{"target":"example"}`, `{"target":"example"}`}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("configs tried %q, want %q", seen, want)
	}
}
