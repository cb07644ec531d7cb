package intercept

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Payload is the typed payload of one point (D2). Every payload type in this
// package implements it with a pointer receiver.
type Payload interface {
	// Validate checks the payload's validity rules for point, including that
	// the payload type belongs to point.
	Validate(point Point) error
}

// ToolCall is one tool call in a provider response.
type ToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is empty (absent or null) or a JSON object.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// InputPayload is the payload of input.receive. Rule: text is non-empty.
type InputPayload struct {
	Text string `json:"text"`
}

// AgentStartPayload is the payload of agent.before_start. Rules: sessionId
// is non-empty, toolCount is not negative.
type AgentStartPayload struct {
	Model     string `json:"model"`
	ToolCount int    `json:"toolCount"`
	SessionID string `json:"sessionId"`
}

// ContextPayload is the payload of context.prepare and compaction.prepare.
// Rules: messages is a JSON array (possibly empty); each element is opaque
// to the dispatcher. Guidance is optional.
type ContextPayload struct {
	Messages json.RawMessage `json:"messages"`
	Guidance *string         `json:"guidance,omitempty"`
}

// ProviderRequestPayload is the payload of provider.request. Rule: request
// is a JSON object (the provider request body, opaque to the dispatcher).
type ProviderRequestPayload struct {
	Request json.RawMessage `json:"request"`
}

// ProviderResponsePayload is the payload of provider.response. Rules: every
// call has a name and arguments that are empty or a JSON object; usage is
// empty (absent or null) or a JSON object.
type ProviderResponsePayload struct {
	Text      string          `json:"text"`
	Reasoning string          `json:"reasoning,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Calls     []ToolCall      `json:"calls"`
	Usage     json.RawMessage `json:"usage,omitempty"`
}

// ToolBeforePayload is the payload of tool.before. Rules: name is
// non-empty; arguments is empty (absent or null) or a JSON object. callId is
// optional.
type ToolBeforePayload struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	CallID    string          `json:"callId,omitempty"`
}

// ToolAfterPayload is the payload of tool.after. Rules: as tool.before;
// result is any JSON value, or absent.
type ToolAfterPayload struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	IsError   bool            `json:"isError"`
	CallID    string          `json:"callId,omitempty"`
}

// PermissionPayload is the payload of permission.decision. Rules: name is
// non-empty; arguments is empty or a JSON object; hostDecision is allow or
// deny. The host's verdict is read from the host's payload before the walk
// and never from a replacement (D10).
type PermissionPayload struct {
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	ReadOnly     bool            `json:"readOnly"`
	HostDecision Decision        `json:"hostDecision"`
}

// CompactionCompletePayload is the payload of compaction.complete. Rule:
// summary is non-empty.
type CompactionCompletePayload struct {
	Summary string `json:"summary"`
}

// SessionPayload is the payload of the session.* points. Rule: phase is the
// point's suffix (session.start ↔ "start", session.end ↔ "end", …).
// sessionPath is optional: a new session may have none yet.
type SessionPayload struct {
	SessionPath string `json:"sessionPath,omitempty"`
	Phase       string `json:"phase"`
}

// SystemPromptPayload is the payload of system_prompt.build, which D2 leaves
// open. Rule: none beyond being an object; prompt may be empty.
type SystemPromptPayload struct {
	Prompt string `json:"prompt"`
}

// FrontendEventPayload is the payload of frontend.event. Rules: kind is
// non-empty; detail is any JSON value, or absent.
type FrontendEventPayload struct {
	Kind   string          `json:"kind"`
	Text   string          `json:"text,omitempty"`
	Detail json.RawMessage `json:"detail,omitempty"`
}

// PayloadFor returns a fresh, zero payload of point's type, or nil for an
// unknown point.
func PayloadFor(point Point) Payload {
	switch point {
	case InputReceive:
		return new(InputPayload)
	case AgentBeforeStart:
		return new(AgentStartPayload)
	case ContextPrepare, CompactionPrepare:
		return new(ContextPayload)
	case ProviderRequest:
		return new(ProviderRequestPayload)
	case ProviderResponse:
		return new(ProviderResponsePayload)
	case ToolBefore:
		return new(ToolBeforePayload)
	case ToolAfter:
		return new(ToolAfterPayload)
	case PermissionDecision:
		return new(PermissionPayload)
	case CompactionComplete:
		return new(CompactionCompletePayload)
	case SessionStart, SessionEnd, SessionLoad, SessionSave, SessionRotate:
		return new(SessionPayload)
	case SystemPromptBuild:
		return new(SystemPromptPayload)
	case FrontendEvent:
		return new(FrontendEventPayload)
	}
	return nil
}

// ErrWrongPayload reports a payload whose type does not belong to the point
// (D2). It is always the host's error.
var ErrWrongPayload = errors.New("payload type does not belong to the point")

func wrongPoint(p Payload, point Point) error {
	return fmt.Errorf("%w: %T at %q", ErrWrongPayload, p, point)
}

func (p *InputPayload) Validate(point Point) error {
	if point != InputReceive {
		return wrongPoint(p, point)
	}
	if p.Text == "" {
		return errors.New("text: must be non-empty")
	}
	return nil
}

func (p *AgentStartPayload) Validate(point Point) error {
	if point != AgentBeforeStart {
		return wrongPoint(p, point)
	}
	if p.SessionID == "" {
		return errors.New("sessionId: required")
	}
	if p.ToolCount < 0 {
		return fmt.Errorf("toolCount: must not be negative, got %d", p.ToolCount)
	}
	return nil
}

func (p *ContextPayload) Validate(point Point) error {
	if point != ContextPrepare && point != CompactionPrepare {
		return wrongPoint(p, point)
	}
	if jsonKind(p.Messages) != '[' {
		return errors.New("messages: must be a JSON array")
	}
	return nil
}

func (p *ProviderRequestPayload) Validate(point Point) error {
	if point != ProviderRequest {
		return wrongPoint(p, point)
	}
	if jsonKind(p.Request) != '{' {
		return errors.New("request: must be a JSON object")
	}
	return nil
}

func (p *ProviderResponsePayload) Validate(point Point) error {
	if point != ProviderResponse {
		return wrongPoint(p, point)
	}
	for i, c := range p.Calls {
		if c.Name == "" {
			return fmt.Errorf("calls[%d].name: required", i)
		}
		if err := emptyOrObject(c.Arguments); err != nil {
			return fmt.Errorf("calls[%d].arguments: %w", i, err)
		}
	}
	if err := emptyOrObject(p.Usage); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	return nil
}

func (p *ToolBeforePayload) Validate(point Point) error {
	if point != ToolBefore {
		return wrongPoint(p, point)
	}
	return validateTool(p.Name, p.Arguments)
}

func (p *ToolAfterPayload) Validate(point Point) error {
	if point != ToolAfter {
		return wrongPoint(p, point)
	}
	return validateTool(p.Name, p.Arguments)
}

func (p *PermissionPayload) Validate(point Point) error {
	if point != PermissionDecision {
		return wrongPoint(p, point)
	}
	if err := validateTool(p.Name, p.Arguments); err != nil {
		return err
	}
	if p.HostDecision != DecisionAllow && p.HostDecision != DecisionDeny {
		return fmt.Errorf("hostDecision: must be %q or %q, got %q", DecisionAllow, DecisionDeny, p.HostDecision)
	}
	return nil
}

func (p *CompactionCompletePayload) Validate(point Point) error {
	if point != CompactionComplete {
		return wrongPoint(p, point)
	}
	if p.Summary == "" {
		return errors.New("summary: required")
	}
	return nil
}

func (p *SessionPayload) Validate(point Point) error {
	phase, ok := strings.CutPrefix(string(point), "session.")
	if !ok || PayloadFor(point) == nil {
		return wrongPoint(p, point)
	}
	if p.Phase != phase {
		return fmt.Errorf("phase: must be %q at %s, got %q", phase, point, p.Phase)
	}
	return nil
}

func (p *SystemPromptPayload) Validate(point Point) error {
	if point != SystemPromptBuild {
		return wrongPoint(p, point)
	}
	return nil
}

func (p *FrontendEventPayload) Validate(point Point) error {
	if point != FrontendEvent {
		return wrongPoint(p, point)
	}
	if p.Kind == "" {
		return errors.New("kind: required")
	}
	return nil
}

func validateTool(name string, args json.RawMessage) error {
	if name == "" {
		return errors.New("name: required")
	}
	if err := emptyOrObject(args); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// emptyOrObject accepts an absent value, null or a JSON object.
func emptyOrObject(raw json.RawMessage) error {
	switch jsonKind(raw) {
	case 0, 'n', '{':
		return nil
	}
	return errors.New("must be empty, null or a JSON object")
}

// jsonKind returns the first non-space byte of raw, 0 when there is none.
func jsonKind(raw []byte) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// DecodeStrict decodes data as the payload of point and validates it: the
// decoding replacements get (D8). data must be exactly one JSON object; keys
// must match the schema's field names exactly (case-sensitive, no
// duplicates, no unknown fields); values must have the schema's types;
// trailing data is rejected. The result is a fresh value, so omitted fields
// are zero. Errors name the offending field where encoding/json does.
func DecodeStrict(point Point, data []byte) (Payload, error) {
	p := PayloadFor(point)
	if p == nil {
		return nil, fmt.Errorf("unknown point %q", point)
	}
	if jsonKind(data) != '{' {
		return nil, errors.New("payload must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("decode %s payload: %w", point, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("decode %s payload: trailing data after the object", point)
	}
	// encoding/json matches keys case-insensitively and lets a duplicate
	// key overwrite; a strict schema does neither.
	kd := json.NewDecoder(bytes.NewReader(data))
	if err := checkKeys(kd, reflect.TypeOf(p).Elem(), ""); err != nil {
		return nil, fmt.Errorf("decode %s payload: %w", point, err)
	}
	if err := p.Validate(point); err != nil {
		return nil, fmt.Errorf("invalid %s payload: %w", point, err)
	}
	return p, nil
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// checkKeys walks one JSON value and checks object keys against the struct
// type t exactly. A nil t (or a RawMessage) skips the value unchecked.
func checkKeys(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		t = nil
	}
	switch delim {
	case '{':
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			var ft reflect.Type
			if fields != nil {
				f, ok := fields[key]
				if !ok {
					return fmt.Errorf("%sunknown field %q (field names are case-sensitive)", path, key)
				}
				if seen[key] {
					return fmt.Errorf("%sduplicate field %q", path, key)
				}
				seen[key] = true
				ft = f
			}
			if err := checkKeys(dec, ft, path+key+"."); err != nil {
				return err
			}
		}
	case '[':
		var et reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			et = t.Elem()
		}
		for dec.More() {
			if err := checkKeys(dec, et, path); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // closing delimiter
	return err
}

func jsonFields(t reflect.Type) map[string]reflect.Type {
	m := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	return m
}
