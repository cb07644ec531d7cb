package dispatch

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/abkit/abkit/sdk/intercept"
)

// fake is a configurable in-process extension that records what it saw.
type fake struct {
	answer func(ctx context.Context, p intercept.Point, payload json.RawMessage) (intercept.Answer, error)

	mu        sync.Mutex
	calls     []string // payloads seen by Call
	events    []string // "point payload" seen by Notify
	notifyErr error
}

func (f *fake) Call(ctx context.Context, p intercept.Point, payload json.RawMessage) (intercept.Answer, error) {
	f.mu.Lock()
	f.calls = append(f.calls, string(payload))
	f.mu.Unlock()
	if f.answer == nil {
		return intercept.Continue(), nil
	}
	return f.answer(ctx, p, payload)
}

func (f *fake) Notify(p intercept.Point, payload json.RawMessage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, string(p)+" "+string(payload))
	return f.notifyErr
}

func (f *fake) seenCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fake) seenEvents() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

func answers(a intercept.Answer) *fake {
	return &fake{answer: func(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) { return a, nil }}
}

func failsWith(err error) *fake {
	return &fake{answer: func(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
		return intercept.Answer{}, err
	}}
}

type warnings struct {
	mu   sync.Mutex
	list []Warning
}

func (w *warnings) add(x Warning) { w.mu.Lock(); w.list = append(w.list, x); w.mu.Unlock() }
func (w *warnings) all() []Warning {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Warning(nil), w.list...)
}

func contrib(id string, ext intercept.Extension, points ...intercept.Point) Contribution {
	return Contribution{Manifest: intercept.Manifest{PluginID: id, Points: points}, Extension: ext}
}

func required(c Contribution) Contribution { c.Manifest.Required = true; return c }

func withSlots(c Contribution, slots ...string) Contribution { c.Manifest.Slots = slots; return c }

func build(t testing.TB, cs ...Contribution) (*Dispatcher, *warnings) {
	t.Helper()
	w := &warnings{}
	d, err := New(cs, Options{OnWarning: w.add})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d, w
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// samples holds, per request point, a valid host payload and a valid,
// different replacement.
func samples() map[intercept.Point][2]intercept.Payload {
	return map[intercept.Point][2]intercept.Payload{
		intercept.InputReceive:       {&intercept.InputPayload{Text: "hi"}, &intercept.InputPayload{Text: "hello"}},
		intercept.AgentBeforeStart:   {&intercept.AgentStartPayload{Model: "m", ToolCount: 2, SessionID: "s1"}, &intercept.AgentStartPayload{SessionID: "s2"}},
		intercept.ContextPrepare:     {&intercept.ContextPayload{Messages: []intercept.Message{{Role: "user"}}}, &intercept.ContextPayload{Messages: []intercept.Message{}}},
		intercept.ProviderRequest:    {&intercept.ProviderRequestPayload{Request: intercept.CompletionRequest{Messages: []intercept.Message{}, Tools: []intercept.ToolSchema{}, MaxTokens: 1}}, &intercept.ProviderRequestPayload{Request: intercept.CompletionRequest{Messages: []intercept.Message{{Role: "user", Content: "x"}}, Tools: []intercept.ToolSchema{}}}},
		intercept.ProviderResponse:   {&intercept.ProviderResponsePayload{Text: "ok"}, &intercept.ProviderResponsePayload{Text: "changed", Calls: []intercept.ToolCall{{ID: "c1", Name: "ls"}}}},
		intercept.ToolBefore:         {&intercept.ToolBeforePayload{Name: "ls", Arguments: `{"dir":"/"}`}, &intercept.ToolBeforePayload{Name: "ls", Arguments: `{"dir":"/tmp"}`}},
		intercept.PermissionDecision: {&intercept.PermissionPayload{Name: "rm", HostDecision: intercept.DecisionDeny}, &intercept.PermissionPayload{Name: "rm", ReadOnly: true, HostDecision: intercept.DecisionDeny}},
		intercept.ToolAfter:          {&intercept.ToolAfterPayload{Name: "ls", Result: "a b"}, &intercept.ToolAfterPayload{Name: "ls", Result: "a"}},
		intercept.CompactionPrepare:  {&intercept.CompactionPreparePayload{Messages: []intercept.Message{{Content: "1"}, {Content: "2"}}, Guidance: "be brief"}, &intercept.CompactionPreparePayload{Messages: []intercept.Message{{Content: "1"}}}},
		intercept.CompactionComplete: {&intercept.CompactionCompletePayload{Summary: "s"}, &intercept.CompactionCompletePayload{Summary: "shorter"}},
	}
}
