// Package submitguard is the submit-guard example hook (family H): a submit
// hook that rejects a request before routing when a rule matches: a
// blocked model, a blocked phrase in a message, or too many messages ([H4]).
// It is fail-closed (H3): if it cannot decide, the request does not go out.
//
// [H4]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package submitguard

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/hooks"
)

// Name is the hook's ID and the plugin's name.
const Name = "submit-guard"

// Description is the one-line catalog description (P5).
const Description = "Rejects submitted requests by model, phrase or message-count rules"

// Order is the hook's place in the submit chain (H1): early, so that later
// hooks never see a request that will be rejected.
const Order = 10

// Config is the hook's configuration.
type Config struct {
	// BlockedModels are model names or path.Match globs.
	BlockedModels []string `json:"blocked_models,omitempty"`
	// Phrases are matched case-insensitively in the messages' text.
	Phrases []string `json:"phrases,omitempty"`
	// MaxMessages rejects longer conversations; 0 means no limit.
	MaxMessages int `json:"max_messages,omitempty"`
}

// DefaultConfig is the catalog build's configuration.
func DefaultConfig() Config {
	return Config{Phrases: []string{"ignore previous instructions"}, MaxMessages: 500}
}

// Plugin bundles the hook with DefaultConfig for the catalog.
func Plugin() sdk.Plugin {
	h, err := New(DefaultConfig())
	if err != nil {
		panic(err) // DefaultConfig is valid; a test holds it to that
	}
	return sdk.Plugin{Name: Name, Description: Description, Hooks: &sdk.HookSet{Submit: []hooks.SubmitHook{h}}}
}

// Hook is a submit-guard instance; read-only after New, safe for
// concurrent requests.
type Hook struct {
	models  []string
	phrases []string // lower case
	max     int
}

var _ hooks.SubmitHook = (*Hook)(nil)

// New checks the config and makes the hook.
func New(c Config) (*Hook, error) {
	for i, m := range c.BlockedModels {
		if m == "" {
			return nil, fmt.Errorf("%s config: blocked_models[%d] is empty", Name, i)
		}
		if _, err := path.Match(m, ""); err != nil {
			return nil, fmt.Errorf("%s config: blocked_models[%d] %q is not a valid glob: %w", Name, i, m, err)
		}
	}
	h := &Hook{models: append([]string(nil), c.BlockedModels...), max: c.MaxMessages}
	for i, p := range c.Phrases {
		if p == "" {
			return nil, fmt.Errorf("%s config: phrases[%d] is empty", Name, i)
		}
		h.phrases = append(h.phrases, strings.ToLower(p))
	}
	if c.MaxMessages < 0 {
		return nil, fmt.Errorf("%s config: max_messages is %d; use 0 for no limit", Name, c.MaxMessages)
	}
	return h, nil
}

// Spec declares the hook: submit kind, fail-closed.
func (*Hook) Spec() hooks.Spec {
	return hooks.Spec{ID: Name, Order: Order, Policy: hooks.PolicyFailClosed, Kind: hooks.KindSubmit}
}

// OnSubmit rejects by the first rule that matches.
func (h *Hook) OnSubmit(_ context.Context, s *hooks.Submit) error {
	for _, m := range h.models {
		if ok, _ := path.Match(m, s.Model); ok {
			return hooks.Reject(fmt.Sprintf("model %q is not allowed here", s.Model))
		}
	}
	if h.max > 0 && len(s.Messages) > h.max {
		return hooks.Reject(fmt.Sprintf("the conversation has %d messages; the limit is %d", len(s.Messages), h.max))
	}
	if len(h.phrases) == 0 {
		return nil
	}
	for i, raw := range s.Messages {
		text := strings.ToLower(messageText(raw))
		for _, p := range h.phrases {
			if strings.Contains(text, p) {
				return hooks.Reject(fmt.Sprintf("message %d contains a blocked phrase (%q)", i, p))
			}
		}
	}
	return nil
}

// messageText returns a message's text: its content string, or the text
// of its content parts; an unreadable message is checked as raw JSON.
func messageText(raw json.RawMessage) string {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
			b.WriteByte('\n')
		}
		return b.String()
	}
	return string(raw)
}
