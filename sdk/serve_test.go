package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk"
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

// TestNewServerRejectsUnservable: what cannot be served is refused, every
// problem at once; a description breaking P5 is not among them.
func TestNewServerRejectsUnservable(t *testing.T) {
	_, err := sdk.NewServer(sdk.Plugin{Name: "x", Description: "two\nlines",
		Pipeline: &gateway.Factory{Name: "y"}})
	if err == nil || !strings.Contains(err.Error(), "make them equal") || !strings.Contains(err.Error(), "Pipeline.New is nil") {
		t.Fatalf("err %v: want the name mismatch and the nil constructor together", err)
	}
	if strings.Contains(err.Error(), "P5") {
		t.Errorf("err %v: a P5 description problem must not make the plugin unservable", err)
	}
}

// TestValidateReportsEverything_P5: Validate, for authors' tests, reports
// the P5 description problem together with what makes the plugin
// unservable; Servable reports only the latter.
func TestValidateReportsEverything_P5(t *testing.T) {
	p := sdk.Plugin{Name: "x", Description: "two\nlines"}
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "P5") || !strings.Contains(err.Error(), "serves no family") {
		t.Fatalf("Validate: %v: want the P5 and no-family problems together", err)
	}
	if err := p.Servable(); err == nil || strings.Contains(err.Error(), "P5") {
		t.Errorf("Servable: %v: want the no-family problem only", err)
	}
	if err := p.CheckDescription(); err == nil || !strings.Contains(err.Error(), "P5") {
		t.Errorf("CheckDescription: %v: want the P5 problem", err)
	}
}

// TestNewServerServesBadDescription_P5: a bundle description of 90 runes is
// served as is, so Describe shows hosts what they must judge.
func TestNewServerServesBadDescription_P5(t *testing.T) {
	long := strings.Repeat("é", 90)
	s, err := sdk.NewServer(sdk.Plugin{Name: "fin", Description: long,
		Pipeline: &gateway.Factory{Name: "fin", New: func(json.RawMessage) (gateway.Plugin, error) { return finisher{}, nil }}})
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	d, err := s.Describe(context.Background(), &abkitv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d.GetDescription() != long {
		t.Errorf("description %q, want the bundle's own", d.GetDescription())
	}
}

func TestDescribe(t *testing.T) {
	s, err := sdk.NewServer(sdk.Plugin{
		Name: "fin", Description: "Finishes",
		Pipeline: &gateway.Factory{Name: "fin", New: func(json.RawMessage) (gateway.Plugin, error) { return finisher{}, nil }},
		Hooks: &sdk.HookSet{Submit: []hooks.SubmitHook{hooks.NewSubmitHook(hooks.Spec{ID: "s", Order: 3},
			func(context.Context, *hooks.Submit) error { return nil })}},
	})
	if err != nil {
		t.Fatal(err)
	}
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
	s, err := sdk.NewServer(sdk.Plugin{
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
	if err != nil {
		t.Fatal(err)
	}
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
