package intercept

import (
	"context"
	"encoding/json"
	"fmt"
)

// Handlers adapts typed handler funcs into an in-process [Extension]. A nil
// handler answers continue; a nil OnEvent ignores events. The payload is
// decoded leniently (extensions read, the dispatcher polices), into a fresh
// value per call.
type Handlers struct {
	InputReceive       func(context.Context, *InputPayload) (Answer, error)
	AgentBeforeStart   func(context.Context, *AgentStartPayload) (Answer, error)
	ContextPrepare     func(context.Context, *ContextPayload) (Answer, error)
	ProviderRequest    func(context.Context, *ProviderRequestPayload) (Answer, error)
	ProviderResponse   func(context.Context, *ProviderResponsePayload) (Answer, error)
	ToolBefore         func(context.Context, *ToolBeforePayload) (Answer, error)
	PermissionDecision func(context.Context, *PermissionPayload) (Answer, error)
	ToolAfter          func(context.Context, *ToolAfterPayload) (Answer, error)
	CompactionPrepare  func(context.Context, *CompactionPreparePayload) (Answer, error)
	CompactionComplete func(context.Context, *CompactionCompletePayload) (Answer, error)
	// OnEvent receives every notification (D20).
	OnEvent func(Point, json.RawMessage) error
}

func handle[T any](ctx context.Context, raw json.RawMessage, f func(context.Context, *T) (Answer, error)) (Answer, error) {
	if f == nil {
		return Continue(), nil
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return Answer{}, fmt.Errorf("decode payload: %w", err)
	}
	return f(ctx, v)
}

// Call implements [Extension].
func (h Handlers) Call(ctx context.Context, point Point, payload json.RawMessage) (Answer, error) {
	switch point {
	case InputReceive:
		return handle(ctx, payload, h.InputReceive)
	case AgentBeforeStart:
		return handle(ctx, payload, h.AgentBeforeStart)
	case ContextPrepare:
		return handle(ctx, payload, h.ContextPrepare)
	case ProviderRequest:
		return handle(ctx, payload, h.ProviderRequest)
	case ProviderResponse:
		return handle(ctx, payload, h.ProviderResponse)
	case ToolBefore:
		return handle(ctx, payload, h.ToolBefore)
	case PermissionDecision:
		return handle(ctx, payload, h.PermissionDecision)
	case ToolAfter:
		return handle(ctx, payload, h.ToolAfter)
	case CompactionPrepare:
		return handle(ctx, payload, h.CompactionPrepare)
	case CompactionComplete:
		return handle(ctx, payload, h.CompactionComplete)
	}
	return Continue(), nil
}

// Notify implements [Extension].
func (h Handlers) Notify(point Point, payload json.RawMessage) error {
	if h.OnEvent == nil {
		return nil
	}
	return h.OnEvent(point, payload)
}

// Funcs adapts two plain funcs into an [Extension]; a nil CallFunc answers
// continue and a nil NotifyFunc ignores events. Unlike [Handlers] it sees
// the raw payload and costs no decoding.
type Funcs struct {
	CallFunc   func(ctx context.Context, point Point, payload json.RawMessage) (Answer, error)
	NotifyFunc func(point Point, payload json.RawMessage) error
}

// Call implements [Extension].
func (f Funcs) Call(ctx context.Context, point Point, payload json.RawMessage) (Answer, error) {
	if f.CallFunc == nil {
		return Continue(), nil
	}
	return f.CallFunc(ctx, point, payload)
}

// Notify implements [Extension].
func (f Funcs) Notify(point Point, payload json.RawMessage) error {
	if f.NotifyFunc == nil {
		return nil
	}
	return f.NotifyFunc(point, payload)
}
