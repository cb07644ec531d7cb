// Package promptowner is the prompt-owner example extension (family D). It
// owns the system_prompt slot and, because the slot's own point
// (system_prompt.build) is event-only and gets no strategy call, also the
// provider_request slot: in its strategy call at provider.request it sets
// the system prompt of the outgoing request ([D19]): its leading system (or
// developer) message, which it adds when the request has none.
//
// Owning a slot makes the extension required-class (D12): if it fails, the
// operation fails rather than go out with the wrong prompt.
//
// [D19]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package promptowner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/intercept"
)

// Name is the extension's plugin ID.
const Name = "prompt-owner"

// Description is the one-line catalog description (P5).
const Description = "Owns the system prompt and sets it on every provider request"

// Modes of combining the configured prompt with the request's own.
const (
	ModeReplace = "replace"
	ModePrepend = "prepend"
	ModeAppend  = "append"
)

// Config is the extension's configuration.
type Config struct {
	Prompt string `json:"prompt"`
	// Mode is replace (the default), prepend or append.
	Mode string `json:"mode,omitempty"`
}

// DefaultConfig is the catalog build's configuration.
func DefaultConfig() Config {
	return Config{Prompt: "You are a careful assistant. Follow the operator's policies.", Mode: ModeReplace}
}

// Manifest owns the system_prompt and provider_request slots.
func Manifest() intercept.Manifest {
	return intercept.Manifest{PluginID: Name, Slots: []string{string(intercept.SlotSystemPrompt), string(intercept.SlotProviderRequest)}}
}

// Plugin bundles the extension with DefaultConfig for the catalog.
func Plugin() sdk.Plugin {
	return sdk.ExtensionPlugin(Name, Description, Manifest(), func() (*Extension, error) { return New(DefaultConfig()) })
}

// Extension sets the system prompt; read-only after New, safe for
// concurrent calls.
type Extension struct {
	prompt string
	mode   string
}

var _ intercept.Extension = (*Extension)(nil)

// New makes the extension.
func New(c Config) (*Extension, error) {
	if c.Prompt == "" {
		return nil, fmt.Errorf("%s config: prompt is empty; give the system prompt to set", Name)
	}
	switch c.Mode {
	case "":
		c.Mode = ModeReplace
	case ModeReplace, ModePrepend, ModeAppend:
	default:
		return nil, fmt.Errorf("%s config: mode %q: want replace, prepend or append", Name, c.Mode)
	}
	return &Extension{prompt: c.Prompt, mode: c.Mode}, nil
}

// Call sets the prompt at provider.request and continues elsewhere.
func (e *Extension) Call(_ context.Context, point intercept.Point, payload json.RawMessage) (intercept.Answer, error) {
	if point != intercept.ProviderRequest {
		return intercept.Continue(), nil
	}
	var p intercept.ProviderRequestPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return intercept.Answer{}, fmt.Errorf("%s: decode provider request payload: %w", Name, err)
	}
	msgs := p.Request.Messages
	if len(msgs) > 0 && (msgs[0].Role == "system" || msgs[0].Role == "developer") {
		next := e.combine(msgs[0].Content)
		if next == msgs[0].Content {
			return intercept.Continue(), nil // D11: the host keeps its bytes
		}
		msgs = append([]intercept.Message{}, msgs...)
		msgs[0].Content = next
	} else {
		msgs = append([]intercept.Message{{Role: "system", Content: e.prompt}}, msgs...)
	}
	// The whole payload is replaced (D8): the rest of the request is
	// carried over as it was.
	p.Request.Messages = msgs
	return intercept.Replace(p)
}

// combine applies the mode to the existing prompt.
func (e *Extension) combine(old string) string {
	if old == "" {
		return e.prompt
	}
	switch e.mode {
	case ModePrepend:
		return e.prompt + "\n\n" + old
	case ModeAppend:
		return old + "\n\n" + e.prompt
	}
	return e.prompt
}

// Notify ignores events, including the system_prompt.build events the
// slot lets it observe (D20).
func (*Extension) Notify(intercept.Point, json.RawMessage) error { return nil }
