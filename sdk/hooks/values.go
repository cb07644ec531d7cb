package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Submit is a request as submit hooks see it, before routing. Messages are
// kept as raw JSON so that the bus does not depend on one provider's message
// format.
type Submit struct {
	Model    string            `json:"model"`
	Messages []json.RawMessage `json:"messages,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Clone returns a deep copy of s: no slice, map or byte is shared.
func (s *Submit) Clone() *Submit {
	if s == nil {
		return nil
	}
	c := &Submit{Model: s.Model, Metadata: maps.Clone(s.Metadata)}
	if s.Messages != nil {
		// One backing buffer for all messages: two allocations, not n+1.
		n := 0
		for _, m := range s.Messages {
			n += len(m)
		}
		buf := make([]byte, 0, n)
		c.Messages = make([]json.RawMessage, len(s.Messages))
		for i, m := range s.Messages {
			if m == nil {
				continue
			}
			start := len(buf)
			buf = append(buf, m...)
			c.Messages[i] = buf[start:len(buf):len(buf)] // capped: an append cannot overwrite the next message
		}
	}
	return c
}

// SetMetadata sets Metadata[key] = value, creating the map if needed.
func (s *Submit) SetMetadata(key, value string) {
	if s.Metadata == nil {
		s.Metadata = make(map[string]string)
	}
	s.Metadata[key] = value
}

// Part is a request part or a response event as part hooks see it.
type Part struct {
	// Index is the part's position in its request or stream, from 0.
	Index int `json:"index"`
	// Type is the part or event type, for example "message" or
	// "content_block_delta".
	Type string          `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Clone returns a copy of p that shares no bytes with it.
func (p Part) Clone() Part {
	if p.Data != nil {
		p.Data = bytes.Clone(p.Data)
	}
	return p
}

// ToolPhase is the point of a tool call's lifecycle an event reports.
type ToolPhase string

const (
	// PhaseStart: the model asked for the call; Arguments are known, there
	// is no result yet.
	PhaseStart ToolPhase = "start"
	// PhaseResult: the call finished; Result and IsError are set.
	PhaseResult ToolPhase = "result"
)

// ToolEvent is one tool lifecycle event as tool reactors see it.
type ToolEvent struct {
	Phase  ToolPhase `json:"phase"`
	CallID string    `json:"call_id"`
	Name   string    `json:"name"`
	// Arguments is empty or a JSON object.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Result is empty or any JSON value; only in the result phase.
	Result  json.RawMessage `json:"result,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

// Tool event field names, as used in the JSON form and in
// [ToolDecision.Fields].
const (
	FieldPhase     = "phase"
	FieldCallID    = "call_id"
	FieldName      = "name"
	FieldArguments = "arguments"
	FieldResult    = "result"
	FieldIsError   = "is_error"
)

// ToolFields lists the field names a rewrite may set.
var ToolFields = []string{FieldPhase, FieldCallID, FieldName, FieldArguments, FieldResult, FieldIsError}

// Validate reports every way e is not a valid tool event: the phase is
// unknown, CallID or Name is empty, Arguments is neither empty nor a JSON
// object, Result is not valid JSON, or Result or IsError is set in the start
// phase.
func (e ToolEvent) Validate() error {
	var errs []error
	switch e.Phase {
	case PhaseStart, PhaseResult:
	default:
		errs = append(errs, fmt.Errorf("phase %q is unknown; want %q or %q", string(e.Phase), PhaseStart, PhaseResult))
	}
	if strings.TrimSpace(e.CallID) == "" {
		errs = append(errs, errors.New("call_id is empty; every tool event carries the ID of its call"))
	}
	if strings.TrimSpace(e.Name) == "" {
		errs = append(errs, errors.New("name is empty; every tool event carries the tool name"))
	}
	if len(e.Arguments) > 0 && !isJSONObject(e.Arguments) {
		errs = append(errs, errors.New("arguments must be empty or a JSON object"))
	}
	if len(e.Result) > 0 && !json.Valid(e.Result) {
		errs = append(errs, errors.New("result is not valid JSON"))
	}
	if e.Phase == PhaseStart {
		if len(e.Result) > 0 {
			errs = append(errs, errors.New("result is set in the start phase; a result belongs to the result phase"))
		}
		if e.IsError {
			errs = append(errs, errors.New("is_error is set in the start phase; it belongs to the result phase"))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid tool event: %w", errors.Join(errs...))
}

func isJSONObject(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(b)
}

// Clone returns a copy of e that shares no bytes with it.
func (e ToolEvent) Clone() ToolEvent {
	if e.Arguments == nil && e.Result == nil {
		return e
	}
	// One allocation for both byte fields; capped so an append to one
	// cannot overwrite the other.
	buf := make([]byte, 0, len(e.Arguments)+len(e.Result))
	if e.Arguments != nil {
		buf = append(buf, e.Arguments...)
		e.Arguments = buf[:len(buf):len(buf)]
	}
	if e.Result != nil {
		start := len(buf)
		buf = append(buf, e.Result...)
		e.Result = buf[start:len(buf):len(buf)]
	}
	return e
}

// WithFields returns e with the named fields set from their JSON values (a
// rewrite, H5). Field names are those of [ToolFields]; an unknown name or a
// value of the wrong JSON type is an error, and e is returned unchanged. A
// JSON null clears arguments or result. The result is not validated; call
// [ToolEvent.Validate].
func (e ToolEvent) WithFields(fields map[string]json.RawMessage) (ToolEvent, error) {
	if len(fields) == 0 {
		return e, errors.New("rewrite names no fields; answer pass to keep the event")
	}
	out := e
	var errs []error
	for name, v := range fields {
		if err := out.setField(name, v); err != nil {
			errs = append(errs, fmt.Errorf("rewrite field %q: %w", name, err))
		}
	}
	// Sorted so that the error text does not depend on map order; the
	// success path pays for no sort.
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	if len(errs) > 0 {
		return e, errors.Join(errs...)
	}
	return out, nil
}

func (e *ToolEvent) setField(name string, v json.RawMessage) (err error) {
	switch name {
	case FieldPhase:
		var s string
		if s, err = jsonString(v); err == nil {
			e.Phase = ToolPhase(s)
		}
	case FieldCallID:
		e.CallID, err = jsonString(v)
	case FieldName:
		e.Name, err = jsonString(v)
	case FieldArguments:
		e.Arguments, err = jsonRaw(v)
	case FieldResult:
		e.Result, err = jsonRaw(v)
	case FieldIsError:
		if isNull(v) {
			return errors.New("want a JSON boolean, got null")
		}
		if err = json.Unmarshal(v, &e.IsError); err != nil {
			err = fmt.Errorf("want a JSON boolean: %w", err)
		}
	default:
		err = fmt.Errorf("unknown field; want one of %s", strings.Join(ToolFields, ", "))
	}
	return err
}

func isNull(v []byte) bool { return string(bytes.TrimSpace(v)) == "null" }

func jsonString(v json.RawMessage) (string, error) {
	if isNull(v) {
		return "", errors.New("want a JSON string, got null")
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("want a JSON string: %w", err)
	}
	return s, nil
}

func jsonRaw(v json.RawMessage) (json.RawMessage, error) {
	if isNull(v) {
		return nil, nil
	}
	if !json.Valid(v) {
		return nil, errors.New("value is not valid JSON")
	}
	return bytes.Clone(v), nil
}

// DecisionKind is a tool reactor's answer (H5).
type DecisionKind string

const (
	// DecisionPass keeps the event and continues. The zero DecisionKind
	// means pass.
	DecisionPass DecisionKind = "pass"
	// DecisionRewrite changes the named fields and continues.
	DecisionRewrite DecisionKind = "rewrite"
	// DecisionReplace substitutes the whole event and continues.
	DecisionReplace DecisionKind = "replace"
	// DecisionSwallow drops the event; no later reactor runs.
	DecisionSwallow DecisionKind = "swallow"
)

// ToolDecision is a tool reactor's answer (H5).
type ToolDecision struct {
	Kind DecisionKind `json:"kind,omitempty"`
	// Fields are the fields a rewrite sets, by JSON name (see [ToolFields]).
	Fields map[string]json.RawMessage `json:"fields,omitempty"`
	// Event is the substitute of a replace.
	Event *ToolEvent `json:"event,omitempty"`
	// Reason optionally explains the decision; it shows in traces.
	Reason string `json:"reason,omitempty"`
}

// Pass keeps the event unchanged.
func Pass() ToolDecision { return ToolDecision{Kind: DecisionPass} }

// Rewrite sets the named fields of the event (see [ToolEvent.WithFields]).
func Rewrite(fields map[string]json.RawMessage) ToolDecision {
	return ToolDecision{Kind: DecisionRewrite, Fields: fields}
}

// Replace substitutes ev for the whole event.
func Replace(ev ToolEvent) ToolDecision { return ToolDecision{Kind: DecisionReplace, Event: &ev} }

// Swallow drops the event; reason shows in traces.
func Swallow(reason string) ToolDecision {
	return ToolDecision{Kind: DecisionSwallow, Reason: reason}
}

// Apply returns the event that follows ev under d, validated, and whether d
// swallowed it. An unknown decision kind, a rewrite naming an unknown field
// or a value of the wrong type, a replace without an event, and a result that
// fails [ToolEvent.Validate] are errors; then ev is returned unchanged.
func (d ToolDecision) Apply(ev ToolEvent) (next ToolEvent, swallowed bool, err error) {
	switch d.Kind {
	case DecisionPass, "":
		return ev, false, nil
	case DecisionSwallow:
		return ev, true, nil
	case DecisionRewrite:
		next, err = ev.WithFields(d.Fields)
		if err != nil {
			return ev, false, err
		}
	case DecisionReplace:
		if d.Event == nil {
			return ev, false, errors.New("replace carries no event; set ToolDecision.Event")
		}
		next = *d.Event
	default:
		return ev, false, fmt.Errorf("unknown decision %q; want %q, %q, %q or %q", string(d.Kind), DecisionPass, DecisionRewrite, DecisionReplace, DecisionSwallow)
	}
	if err := next.Validate(); err != nil {
		return ev, false, fmt.Errorf("%s produced an %w", d.Kind, err)
	}
	return next, false, nil
}
