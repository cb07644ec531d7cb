package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// needsKey is a plugin that takes configuration and refuses to be made
// without {"key": ...}, as a port of a plugin that decodes its own config.
type needsKey struct{ desc string }

func (needsKey) Name() string { return "needs-key" }
func (n needsKey) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: n.desc}
}
func (needsKey) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (needsKey) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

func needsKeyPlugin(schema *gateway.ConfigSchema, desc string) sdk.Plugin {
	return sdk.Plugin{Name: "needs-key", Description: desc, Pipeline: &gateway.Factory{Name: "needs-key", Config: schema,
		New: func(cfg json.RawMessage) (gateway.Plugin, error) {
			var c struct{ Key string }
			if len(cfg) == 0 || json.Unmarshal(cfg, &c) != nil || c.Key == "" {
				return nil, errors.New("key is required")
			}
			return needsKey{desc: desc}, nil
		}}}
}

func caseResult(t *testing.T, rep *conformance.Report, id string) conformance.CaseResult {
	t.Helper()
	for _, r := range rep.Results {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no case %s", id)
	return conformance.CaseResult{}
}

// TestProbe_P6: a plugin whose schema describes nothing is "not probed" (a
// skip with the reason), not a P6 failure; with ConfigSchema.Examples it
// is probed and its exchange cases run.
func TestProbe_P6(t *testing.T) {
	const desc = "Needs a key to be made"
	rep, err := conformance.Run(context.Background(), conformance.PluginSuite(),
		conformance.InProcess(needsKeyPlugin(&gateway.ConfigSchema{Open: true}, desc)), conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := caseResult(t, rep, "P6/instance/default-config")
	if r.Status != conformance.StatusSkip || !strings.Contains(r.Reason, "not probed") || !strings.Contains(r.Reason, "ConfigSchema.Examples") {
		t.Errorf("schema-less: %s %q, want a not-probed skip", r.Status, r.Reason)
	}
	rep, err = conformance.Run(context.Background(), conformance.PluginSuite(),
		conformance.InProcess(needsKeyPlugin(&gateway.ConfigSchema{Open: true, Examples: []json.RawMessage{json.RawMessage(`{"key":"k"}`)}}, desc)), conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := caseResult(t, rep, "P6/instance/default-config"); r.Status != conformance.StatusPass {
		t.Errorf("with an example: %s %q, want pass", r.Status, r.Reason)
	}
	ran := 0
	for _, r := range rep.Results {
		if r.Status.Bad() {
			t.Errorf("%s: %s %v", r.ID, r.Status, r.Failures)
		}
		if r.Status == conformance.StatusPass && strings.HasPrefix(r.ID, "P15") {
			ran++
		}
	}
	if ran == 0 {
		t.Error("no P15 exchange case ran on the probed plugin")
	}
}

// TestLongDescription_P5: an 81-rune description fails the P5 cases and
// nothing else: the runtime builds the chain (with a warning), so the
// exchange cases run instead of being skipped.
func TestLongDescription_P5(t *testing.T) {
	desc := strings.Repeat("x", 81)
	rep, err := conformance.Run(context.Background(), conformance.PluginSuite(),
		conformance.InProcess(needsKeyPlugin(&gateway.ConfigSchema{Examples: []json.RawMessage{json.RawMessage(`{"key":"k"}`)}}, desc)), conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exchange := 0
	for _, r := range rep.Results {
		switch {
		case strings.HasPrefix(r.ID, "P5/"):
			if r.Status != conformance.StatusFail {
				t.Errorf("%s: %s, want fail", r.ID, r.Status)
			}
		case r.Status.Bad():
			t.Errorf("%s: %s %v", r.ID, r.Status, r.Failures)
		case r.Status == conformance.StatusPass && strings.HasPrefix(r.ID, "P15"):
			exchange++
		}
	}
	if exchange == 0 {
		t.Error("no P15 exchange case ran: a P5 break still keeps the chain from being built")
	}
}

// TestTraceShowsExtensions: conformance --trace logs, under each call,
// the extensions it set, so an author sees what a parser extracted.
func TestTraceShowsExtensions(t *testing.T) {
	rep, err := conformance.Run(context.Background(), conformance.PluginSuite(), conformance.InProcess(inferenceparser.Plugin()),
		conformance.Options{Run: []*regexp.Regexp{regexp.MustCompile(`^P22/`)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		for _, l := range r.Log {
			if strings.Contains(l, "ext inference = {") {
				return
			}
		}
	}
	t.Errorf("no case log shows the inference extension; logs: %+v", rep.Results)
}
