package probe

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

type plug struct{}

func (plug) Name() string                                                 { return "p" }
func (plug) Capabilities() gateway.Capabilities                           { return gateway.Capabilities{} }
func (plug) OnRequest(context.Context, *gateway.Exchange) gateway.Action  { return gateway.Continue() }
func (plug) OnResponse(context.Context, *gateway.Exchange) gateway.Action { return gateway.Continue() }

func TestInstances(t *testing.T) {
	example := json.RawMessage(`{"k":1}`)
	for _, tc := range []struct {
		name    string
		f       gateway.Factory
		wantErr string // "" for success
		wantCfg string
	}{
		{"no config", gateway.Factory{Name: "a", New: func(json.RawMessage) (gateway.Plugin, error) { return plug{}, nil }}, "", ""},
		{"needs its example", gateway.Factory{Name: "b", Config: &gateway.ConfigSchema{Open: true, Examples: []json.RawMessage{example}},
			New: func(c json.RawMessage) (gateway.Plugin, error) {
				if !strings.Contains(string(c), `"k"`) {
					return nil, errors.New("config required")
				}
				return plug{}, nil
			}}, "", `{"k":1}`},
		{"no New", gateway.Factory{Name: "c"}, `factory "c" has no New function`, ""},
		{"panics", gateway.Factory{Name: "d", New: func(json.RawMessage) (gateway.Plugin, error) { panic("boom") }}, `factory "d" panicked: boom`, ""},
		{"nil plugin", gateway.Factory{Name: "e", New: func(json.RawMessage) (gateway.Plugin, error) { return nil, nil }}, `factory "e" returned a nil plugin`, ""},
		{"refuses all", gateway.Factory{Name: "f", New: func(json.RawMessage) (gateway.Plugin, error) { return nil, errors.New("no") }}, "no", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			insts, cfg, err := Instances(&tc.f)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(insts) != 2 || string(cfg) != tc.wantCfg {
				t.Fatalf("Instances = %d instances, config %s, %v; want 2, %s, nil", len(insts), cfg, err, tc.wantCfg)
			}
		})
	}
}
