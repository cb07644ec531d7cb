package intercept

import (
	"fmt"
	"strings"
	"unicode"
)

// SlotKind is the kind of a replaceable slot (D17).
type SlotKind string

// The closed set of named slots, plus the two parameterised kinds.
const (
	SlotSystemPrompt     SlotKind = "system_prompt"
	SlotContext          SlotKind = "context"
	SlotProviderRequest  SlotKind = "provider_request"
	SlotProviderResponse SlotKind = "provider_response"
	SlotCompaction       SlotKind = "compaction"
	SlotSessionPolicy    SlotKind = "session_policy"
	SlotPermission       SlotKind = "permission"
	SlotFrontendEvents   SlotKind = "frontend_events"
	// SlotTool is tool:<name>.
	SlotTool SlotKind = "tool"
	// SlotProvider is provider:<name>/<model> or
	// provider:plugin/<id>/<name>/<model>.
	SlotProvider SlotKind = "provider"
)

// slotPoints maps each slot kind to the points it is mapped to. At request
// points the owner rules in the strategy phase (D19); at every mapped point,
// request or event-only, the owner observes the final payload (D20).
var slotPoints = map[SlotKind][]Point{
	SlotSystemPrompt:     {SystemPromptBuild},
	SlotContext:          {ContextPrepare},
	SlotProviderRequest:  {ProviderRequest},
	SlotProviderResponse: {ProviderResponse},
	SlotCompaction:       {CompactionPrepare, CompactionComplete},
	SlotSessionPolicy:    {SessionStart, SessionEnd, SessionLoad, SessionSave, SessionRotate},
	SlotPermission:       {PermissionDecision},
	SlotFrontendEvents:   {FrontendEvent},
	SlotTool:             {ToolBefore, ToolAfter},
	SlotProvider:         {ProviderRequest, ProviderResponse},
}

// Slot is a parsed slot name (D17).
type Slot struct {
	Kind SlotKind
	// Tool is the tool name of a tool:<name> slot.
	Tool string
	// Plugin, Provider and Model are the parts of a provider slot; Plugin
	// is empty for provider:<name>/<model>.
	Plugin   string
	Provider string
	Model    string
}

const validSlotForms = "system_prompt, context, provider_request, provider_response, compaction, " +
	"session_policy, permission, frontend_events, tool:<name>, provider:<name>/<model>, " +
	"provider:plugin/<id>/<name>/<model>"

// ParseSlot parses a slot name (D17). Names are case-sensitive. tool:<name>
// needs a non-empty name without whitespace. provider:<name>/<model> needs
// non-empty parts without whitespace; the model is everything after the
// first slash, so model IDs such as meta-llama/Llama-3 work. A first part
// "plugin" selects provider:plugin/<id>/<name>/<model>, so no provider can
// be named "plugin". Anything else is rejected with an error listing the
// valid forms.
func ParseSlot(s string) (Slot, error) {
	if k := SlotKind(s); k != SlotTool && k != SlotProvider {
		if _, ok := slotPoints[k]; ok {
			return Slot{Kind: k}, nil
		}
	}
	bad := func(why string) (Slot, error) {
		return Slot{}, fmt.Errorf("invalid slot %q: %s; valid slots: %s", s, why, validSlotForms)
	}
	if name, ok := strings.CutPrefix(s, "tool:"); ok {
		if name == "" || hasSpace(name) {
			return bad("tool name must be non-empty and contain no whitespace")
		}
		return Slot{Kind: SlotTool, Tool: name}, nil
	}
	if rest, ok := strings.CutPrefix(s, "provider:"); ok {
		if hasSpace(rest) {
			return bad("provider slot must contain no whitespace")
		}
		sl := Slot{Kind: SlotProvider}
		if r, ok := strings.CutPrefix(rest, "plugin/"); ok {
			parts := strings.SplitN(r, "/", 3)
			if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
				return bad("want provider:plugin/<id>/<name>/<model> with non-empty parts")
			}
			sl.Plugin, sl.Provider, sl.Model = parts[0], parts[1], parts[2]
			return sl, nil
		}
		name, model, ok := strings.Cut(rest, "/")
		if !ok || name == "" || model == "" || name == "plugin" {
			return bad("want provider:<name>/<model> with non-empty parts")
		}
		sl.Provider, sl.Model = name, model
		return sl, nil
	}
	return bad("not a known slot")
}

func hasSpace(s string) bool { return strings.IndexFunc(s, unicode.IsSpace) >= 0 }

// String returns the canonical slot name; ParseSlot(s.String()) == s.
func (s Slot) String() string {
	switch s.Kind {
	case SlotTool:
		return "tool:" + s.Tool
	case SlotProvider:
		return "provider:" + s.ProviderKey()
	}
	return string(s.Kind)
}

// ProviderKey is the provider target a host names in a dispatch to reach a
// provider slot: "<name>/<model>" or "plugin/<id>/<name>/<model>". It is
// empty for other kinds.
func (s Slot) ProviderKey() string {
	if s.Kind != SlotProvider {
		return ""
	}
	if s.Plugin != "" {
		return "plugin/" + s.Plugin + "/" + s.Provider + "/" + s.Model
	}
	return s.Provider + "/" + s.Model
}

// Points returns the points the slot is mapped to: the owner rules the
// strategy phase at the request points among them (D19) and observes the
// final payload at all of them (D20). tool:<name> applies only to calls of
// that tool; provider slots only to dispatches naming their provider key.
func (s Slot) Points() []Point { return append([]Point(nil), slotPoints[s.Kind]...) }

// Applies reports whether the slot is in play for a dispatch at point whose
// tool name is tool (tool.before/tool.after) and whose provider target is
// provider (provider.request/provider.response).
func (s Slot) Applies(point Point, tool, provider string) bool {
	mapped := false
	for _, p := range slotPoints[s.Kind] {
		if p == point {
			mapped = true
			break
		}
	}
	switch {
	case !mapped:
		return false
	case s.Kind == SlotTool:
		return tool == s.Tool
	case s.Kind == SlotProvider:
		return provider != "" && provider == s.ProviderKey()
	}
	return true
}
