// Package contexttrimmer is the context-trimmer example extension (family
// D). At context.prepare it replaces the message list with its last N
// messages ([D8]), keeping leading system messages and never starting the
// kept window with an orphaned tool result. When nothing needs trimming it
// answers continue, so the host keeps its own bytes (D11).
//
// [D8]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package contexttrimmer

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/intercept"
)

// Name is the extension's plugin ID.
const Name = "context-trimmer"

// Description is the one-line catalog description (P5).
const Description = "Trims the agent's context to the last N messages before each turn"

// DefaultKeep is how many messages the catalog build keeps.
const DefaultKeep = 50

// Config is the extension's configuration.
type Config struct {
	// Keep is how many messages (besides kept system messages) remain.
	Keep int `json:"keep"`
	// DropSystem drops leading system messages like any other; by default
	// they are always kept.
	DropSystem bool `json:"drop_system,omitempty"`
}

// Manifest joins the chain at context.prepare.
func Manifest() intercept.Manifest {
	return intercept.Manifest{PluginID: Name, Points: []intercept.Point{intercept.ContextPrepare}}
}

// Plugin bundles the extension, keeping DefaultKeep messages, for the
// catalog.
func Plugin() sdk.Plugin {
	return sdk.ExtensionPlugin(Name, Description, Manifest(), func() (*Extension, error) { return New(Config{Keep: DefaultKeep}) })
}

// Extension trims context; read-only after New, safe for concurrent calls.
type Extension struct {
	keep       int
	keepSystem bool
}

var _ intercept.Extension = (*Extension)(nil)

// New makes the extension.
func New(c Config) (*Extension, error) {
	if c.Keep < 1 {
		return nil, fmt.Errorf("%s config: keep is %d; keep at least 1 message", Name, c.Keep)
	}
	return &Extension{keep: c.Keep, keepSystem: !c.DropSystem}, nil
}

// Call trims at context.prepare and continues everywhere else.
func (e *Extension) Call(_ context.Context, point intercept.Point, payload json.RawMessage) (intercept.Answer, error) {
	if point != intercept.ContextPrepare {
		return intercept.Continue(), nil
	}
	var p intercept.ContextPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return intercept.Answer{}, fmt.Errorf("%s: decode context payload: %w", Name, err)
	}
	kept := e.trim(p.Messages)
	if len(kept) == len(p.Messages) {
		return intercept.Continue(), nil
	}
	// The whole payload is replaced (D8); context.prepare has no other field.
	return intercept.Replace(intercept.ContextPayload{Messages: kept})
}

// trim returns the leading system messages (unless dropped) and the last
// keep others, minus tool results (role "tool") whose call was trimmed
// away.
func (e *Extension) trim(msgs []intercept.Message) []intercept.Message {
	head := 0
	if e.keepSystem {
		for head < len(msgs) && (msgs[head].Role == "system" || msgs[head].Role == "developer") {
			head++
		}
	}
	if len(msgs)-head <= e.keep {
		return msgs
	}
	start := len(msgs) - e.keep
	for start < len(msgs) && msgs[start].Role == "tool" {
		start++
	}
	return append(append([]intercept.Message{}, msgs[:head]...), msgs[start:]...)
}

// Notify ignores events.
func (*Extension) Notify(intercept.Point, json.RawMessage) error { return nil }
