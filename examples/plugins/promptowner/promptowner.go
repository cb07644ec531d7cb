// Package promptowner is the prompt-owner example extension (family D). It
// owns the system_prompt slot and, because the slot's own point
// (system_prompt.build) is event-only and gets no strategy call, also the
// provider_request slot: in its strategy call at provider.request it sets
// the system prompt of the outgoing request ([D19]), in either request style:
// a top-level "system" field (messages style) or a leading system message
// (chat-completions style).
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
	return sdk.Plugin{
		Name:        Name,
		Description: Description,
		Extension: &sdk.Extension{
			Manifest: Manifest(),
			New:      func() (intercept.Extension, error) { return New(DefaultConfig()) },
		},
	}
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
	var req map[string]json.RawMessage
	if err := json.Unmarshal(p.Request, &req); err != nil {
		return intercept.Answer{}, fmt.Errorf("%s: request is not a JSON object: %w", Name, err)
	}
	changed, err := e.apply(req)
	if err != nil {
		return intercept.Answer{}, err
	}
	if !changed {
		return intercept.Continue(), nil // D11: the host keeps its bytes
	}
	out, err := json.Marshal(req)
	if err != nil {
		return intercept.Answer{}, fmt.Errorf("%s: encode request: %w", Name, err)
	}
	return intercept.Replace(intercept.ProviderRequestPayload{Request: out})
}

// apply sets the prompt in req and reports whether it changed anything.
func (e *Extension) apply(req map[string]json.RawMessage) (bool, error) {
	if sys, ok := req["system"]; ok {
		return e.setSystemField(req, sys)
	}
	if raw, ok := req["messages"]; ok {
		var msgs []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return false, fmt.Errorf("%s: messages is not an array of objects: %w", Name, err)
		}
		changed := false
		if len(msgs) > 0 && (role(msgs[0]) == "system" || role(msgs[0]) == "developer") {
			old, isString := stringOf(msgs[0]["content"])
			next := e.combine(old, isString)
			if !isString || next != old {
				msgs[0]["content"] = mustJSON(next)
				changed = true
			}
		} else {
			sys := map[string]json.RawMessage{"role": mustJSON("system"), "content": mustJSON(e.prompt)}
			msgs = append([]map[string]json.RawMessage{sys}, msgs...)
			changed = true
		}
		if changed {
			req["messages"] = mustJSON(msgs)
		}
		return changed, nil
	}
	// Neither style recognisable: a messages-style system field is the
	// least surprising addition.
	req["system"] = mustJSON(e.prompt)
	return true, nil
}

func (e *Extension) setSystemField(req map[string]json.RawMessage, sys json.RawMessage) (bool, error) {
	if old, isString := stringOf(sys); isString || string(sys) == "null" {
		next := e.combine(old, true)
		if next == old && isString {
			return false, nil
		}
		req["system"] = mustJSON(next)
		return true, nil
	}
	// An array of content blocks: replace it, or add a text block.
	var blocks []json.RawMessage
	if err := json.Unmarshal(sys, &blocks); err != nil {
		return false, fmt.Errorf("%s: system is neither a string nor an array: %w", Name, err)
	}
	block := mustJSON(map[string]string{"type": "text", "text": e.prompt})
	switch e.mode {
	case ModePrepend:
		blocks = append([]json.RawMessage{block}, blocks...)
	case ModeAppend:
		blocks = append(blocks, block)
	default:
		blocks = []json.RawMessage{block}
	}
	req["system"] = mustJSON(blocks)
	return true, nil
}

// combine applies the mode to an existing string prompt.
func (e *Extension) combine(old string, isString bool) string {
	if !isString || old == "" {
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

func role(m map[string]json.RawMessage) string {
	s, _ := stringOf(m["role"])
	return s
}

func stringOf(raw json.RawMessage) (string, bool) {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only strings, maps and slices of them are encoded here
	}
	return b
}

// Notify ignores events, including the system_prompt.build events the
// slot lets it observe (D20).
func (*Extension) Notify(intercept.Point, json.RawMessage) error { return nil }
