// Package intercept holds the contract types of the intercept dispatcher
// (family D of the abkit contracts): what an agent extension author
// implements, and what every abkit runtime, in-process or across a process
// boundary, drives.
//
// An agent host consults extensions at fixed interception [Point]s ([D1]).
// Each point carries one typed payload (D2), sent to extensions as a JSON
// object with camelCase fields. An extension answers a request point with an
// [Answer]: continue, block, replace, or (only at permission.decision) allow
// or deny. Event-only points get no decision, only a fire-and-forget
// notification (D20).
//
// An extension implements [Extension] and is described by a [Manifest]. An
// in-process extension is most easily written with [Handlers]:
//
//	ext := intercept.Handlers{
//		ToolBefore: func(ctx context.Context, p *intercept.ToolBeforePayload) (intercept.Answer, error) {
//			if p.Name == "rm" {
//				return intercept.Block("rm is disabled here"), nil
//			}
//			return intercept.Continue(), nil
//		},
//	}
//	m := intercept.Manifest{PluginID: "no-rm", Points: []intercept.Point{intercept.ToolBefore}}
//
// [D1]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Point is an interception point (D1).
type Point string

// Request points: the host waits for the chain's decisions (D6–D11).
const (
	InputReceive       Point = "input.receive"
	AgentBeforeStart   Point = "agent.before_start"
	ContextPrepare     Point = "context.prepare"
	ProviderRequest    Point = "provider.request"
	ProviderResponse   Point = "provider.response"
	ToolBefore         Point = "tool.before"
	PermissionDecision Point = "permission.decision"
	ToolAfter          Point = "tool.after"
	CompactionPrepare  Point = "compaction.prepare"
	CompactionComplete Point = "compaction.complete"
)

// Event-only points: no decisions, only the broadcast (D20).
const (
	SessionStart      Point = "session.start"
	SessionEnd        Point = "session.end"
	SessionLoad       Point = "session.load"
	SessionSave       Point = "session.save"
	SessionRotate     Point = "session.rotate"
	SystemPromptBuild Point = "system_prompt.build"
	FrontendEvent     Point = "frontend.event"
)

var allPoints = []Point{
	InputReceive, AgentBeforeStart, ContextPrepare, ProviderRequest,
	ProviderResponse, ToolBefore, PermissionDecision, ToolAfter,
	CompactionPrepare, CompactionComplete,
	SessionStart, SessionEnd, SessionLoad, SessionSave, SessionRotate,
	SystemPromptBuild, FrontendEvent,
}

// Points returns every point of D1, request points first, in spec order.
// The slice is a fresh copy.
func Points() []Point { return append([]Point(nil), allPoints...) }

// Valid reports whether p is a point of D1.
func (p Point) Valid() bool {
	for _, q := range allPoints {
		if p == q {
			return true
		}
	}
	return false
}

// IsEventOnly reports whether p is an event-only point (D1): extensions are
// notified there but never asked for a decision.
func IsEventOnly(p Point) bool {
	switch p {
	case SessionStart, SessionEnd, SessionLoad, SessionSave, SessionRotate,
		SystemPromptBuild, FrontendEvent:
		return true
	}
	return false
}

// Budget returns the default time budget of a call at p (D3): 5 s for
// input.receive, tool.* and permission.decision, 30 s elsewhere.
func Budget(p Point) time.Duration {
	switch p {
	case InputReceive, ToolBefore, ToolAfter, PermissionDecision:
		return 5 * time.Second
	}
	return 30 * time.Second
}

// MaxTimeout caps a manifest's own budget (D3).
const MaxTimeout = 60 * time.Second

// Priority bounds (D4). A manifest priority outside them fails the build.
const (
	MinPriority = -1000
	MaxPriority = 1000
)

// Decision is an extension's answer at a request point (D6–D9).
type Decision string

const (
	// DecisionContinue passes the current payload on unchanged (D6).
	DecisionContinue Decision = "continue"
	// DecisionBlock stops the walk and the operation with a reason (D7).
	DecisionBlock Decision = "block"
	// DecisionReplace substitutes the whole payload with Answer.Replacement,
	// decoded strictly against the point's schema (D8).
	DecisionReplace Decision = "replace"
	// DecisionAllow and DecisionDeny are legal only at permission.decision,
	// where the first one ends the walk (D9, D10).
	DecisionAllow Decision = "allow"
	DecisionDeny  Decision = "deny"
)

// Valid reports whether d is one of the five decisions. Any other value in
// an answer is a contract violation (D9).
func (d Decision) Valid() bool {
	switch d {
	case DecisionContinue, DecisionBlock, DecisionReplace, DecisionAllow, DecisionDeny:
		return true
	}
	return false
}

// Answer is an extension's reply to a call at a request point.
type Answer struct {
	Decision Decision `json:"decision"`
	// Reason explains a block, allow or deny. The dispatcher redacts
	// credentials from it before it leaves (D16).
	Reason string `json:"reason,omitempty"`
	// Replacement is the whole new payload for DecisionReplace: a JSON
	// object of the point's schema. Omitted fields become zero (D8).
	Replacement json.RawMessage `json:"replacement,omitempty"`
}

// Continue returns a continue answer (D6).
func Continue() Answer { return Answer{Decision: DecisionContinue} }

// Block returns a block answer with reason (D7).
func Block(reason string) Answer { return Answer{Decision: DecisionBlock, Reason: reason} }

// Allow returns an allow answer for permission.decision (D9).
func Allow(reason string) Answer { return Answer{Decision: DecisionAllow, Reason: reason} }

// Deny returns a deny answer for permission.decision (D9).
func Deny(reason string) Answer { return Answer{Decision: DecisionDeny, Reason: reason} }

// Replace returns a replace answer carrying the JSON encoding of payload
// (D8). It fails only if payload cannot be encoded.
func Replace(payload any) (Answer, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return Answer{}, fmt.Errorf("intercept: encode replacement: %w", err)
	}
	return Answer{Decision: DecisionReplace, Replacement: b}, nil
}

// Extension is what the dispatcher drives. An in-process extension and one
// in another process (behind a protocol adapter) look the same.
//
// Call asks for a decision at a request point. ctx carries the call's time
// budget as its deadline (D3): an answer that arrives after the deadline is
// a timeout failure even if it is otherwise valid, and an adapter for an
// out-of-process extension must abort its call when ctx is done. ctx is
// valid only until Call returns; start longer work from a context of your
// own. payload is the current payload of the point as a JSON object; it is
// shared and must not be modified or retained after Call returns.
//
// Notify delivers a fire-and-forget event (D20): the final payload of a
// completed walk, or an event-only point's payload. Its error is only
// warned about. Notify is called from the dispatcher's event worker, never
// from the host's goroutine; the payload may be retained but not modified.
//
// An adapter that finds no live extension process returns an error
// wrapping [ErrNoProcess].
type Extension interface {
	Call(ctx context.Context, point Point, payload json.RawMessage) (Answer, error)
	Notify(point Point, payload json.RawMessage) error
}

// ErrNoProcess reports that an extension has no live process to answer
// (D13). Protocol adapters wrap it; the dispatcher treats it as a failure.
var ErrNoProcess = errors.New("no live extension process")

// Manifest describes an extension to the dispatcher.
type Manifest struct {
	// PluginID addresses the extension. A contribution without one is
	// skipped with a note (D5). IDs also break priority ties (D4).
	PluginID string `json:"pluginId"`
	// Required makes the extension required-class (D12): its failures and
	// violations fail the operation. Owning any slot also does.
	Required bool `json:"required,omitempty"`
	// Points are the points where the extension joins the chain (request
	// points) or is notified (event-only points).
	Points []Point `json:"points,omitempty"`
	// Priority orders the chain ascending, bounded to -1000…1000 (D4).
	Priority int `json:"priority,omitempty"`
	// Slots the extension owns (D17–D19); see [ParseSlot] and
	// [Slot.Observes] for the points each slot rules and observes.
	Slots []string `json:"slots,omitempty"`
	// Timeout overrides the default per-call budget at every point (D3). Zero
	// keeps the default; values above [MaxTimeout] are capped; negative
	// values fail the build.
	Timeout time.Duration `json:"timeout,omitempty"`
}
