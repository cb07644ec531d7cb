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

// The payload shapes are the source protocol's DTOs, field for field
// (Reasonix's fork, patrickrho-patty/patty-code:
// internal/extension/dispatch/payloads.go and the provider DTOs of
// internal/extension/protocol/dto_provider.go), so that an extension
// written for its payloads reads and replaces abkit's. docs/contracts.md
// (D2) lists them. Two places differ on purpose: messages are written
// out even when empty (the source's omitempty turns an empty list into
// {}, which its own Validate refuses), and every validity rule is also
// applied to the host's payload (choice D2.host-check).

// Message is one message of a conversation (the source's
// protocol.ProviderMessage). Its field names are snake_case, as in the
// provider transcripts it copies.
type Message struct {
	Role               string     `json:"role,omitempty"`
	Content            string     `json:"content,omitempty"`
	Images             []string   `json:"images,omitempty"`
	ReasoningContent   string     `json:"reasoning_content,omitempty"`
	ReasoningSignature string     `json:"reasoning_signature,omitempty"`
	ToolCalls          []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID         string     `json:"tool_call_id,omitempty"`
	Name               string     `json:"name,omitempty"`
}

// ToolCall is one tool call the provider asked for (the source's
// protocol.ProviderToolCall). Arguments is the JSON argument object as
// text, exactly as the provider streamed it.
type ToolCall struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

// ToolSchema is one tool offered to the provider (protocol.ProviderToolSchema).
// Parameters is a JSON Schema object.
type ToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ResponseFormat constrains the provider's output (protocol.ProviderResponseFormat).
type ResponseFormat struct {
	Type string `json:"type"`
}

// CompletionRequest is the completion request sent to the provider
// (protocol.ProviderRequest). Rules: messages and tools are arrays (empty
// ones are the canonical form, absent or null ones invalid); maxTokens is
// not negative; a responseFormat has a non-blank type; every tool's
// parameters are a JSON object.
type CompletionRequest struct {
	Messages       []Message       `json:"messages"`
	Tools          []ToolSchema    `json:"tools"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"maxTokens"`
	ResponseFormat *ResponseFormat `json:"responseFormat,omitempty"`
}

// Usage is a response's token accounting (protocol.ProviderUsage).
type Usage struct {
	PromptTokens     int    `json:"promptTokens"`
	CompletionTokens int    `json:"completionTokens"`
	TotalTokens      int    `json:"totalTokens"`
	CacheHitTokens   int    `json:"cacheHitTokens"`
	CacheMissTokens  int    `json:"cacheMissTokens"`
	ReasoningTokens  int    `json:"reasoningTokens"`
	FinishReason     string `json:"finishReason,omitempty"`
}

// InputPayload is the payload of input.receive. Rule: text is non-empty.
type InputPayload struct {
	Text string `json:"text"`
}

// AgentStartPayload is the payload of agent.before_start. Rule: sessionId
// is non-empty.
type AgentStartPayload struct {
	Model     string `json:"model"`
	ToolCount int    `json:"toolCount"`
	SessionID string `json:"sessionId"`
}

// ContextPayload is the payload of context.prepare. Rule: messages is an
// array (possibly empty; absent or null is invalid).
type ContextPayload struct {
	Messages []Message `json:"messages"`
}

// CompactionPreparePayload is the payload of compaction.prepare: the
// messages to compact and the host's guidance for the summary. Rule: as
// ContextPayload.
type CompactionPreparePayload struct {
	Messages []Message `json:"messages"`
	Guidance string    `json:"guidance,omitempty"`
}

// ProviderRequestPayload is the payload of provider.request. Rules: those
// of CompletionRequest.
type ProviderRequestPayload struct {
	Request CompletionRequest `json:"request"`
}

// ProviderResponsePayload is the payload of provider.response: the
// assembled response of one provider stream. Rule: every call has an id
// and a name.
type ProviderResponsePayload struct {
	Text      string     `json:"text,omitempty"`
	Reasoning string     `json:"reasoning,omitempty"`
	Signature string     `json:"signature,omitempty"`
	Calls     []ToolCall `json:"calls,omitempty"`
	Usage     *Usage     `json:"usage,omitempty"`
}

// ToolBeforePayload is the payload of tool.before. Rules: name is
// non-empty; arguments, the tool's JSON argument object as text, is empty
// or a JSON object.
type ToolBeforePayload struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
}

// ToolAfterPayload is the payload of tool.after: the call and what the
// tool returned, as text. Rules: as tool.before.
type ToolAfterPayload struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
	Result    string `json:"result,omitempty"`
	IsError   bool   `json:"isError,omitempty"`
}

// PermissionPayload is the payload of permission.decision. Rules: name is
// non-empty; arguments as tool.before; hostDecision is allow or deny. The
// host's verdict is read from the host's payload before the walk and never
// from a replacement (D10).
type PermissionPayload struct {
	Name         string   `json:"name"`
	Arguments    string   `json:"arguments,omitempty"`
	ReadOnly     bool     `json:"readOnly,omitempty"`
	HostDecision Decision `json:"hostDecision"`
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

// SystemPromptPayload is the payload of system_prompt.build. Rule:
// workspaceRoot is non-empty; the prompt may be empty (an owner blanking
// it is a policy question, not a shape violation).
type SystemPromptPayload struct {
	Prompt        string `json:"prompt,omitempty"`
	WorkspaceRoot string `json:"workspaceRoot"`
}

// FrontendEventPayload is the payload of frontend.event. Rule: kind is
// non-empty.
type FrontendEventPayload struct {
	Kind   string `json:"kind"`
	Text   string `json:"text,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// PayloadFor returns a fresh, zero payload of point's type, or nil for an
// unknown point.
func PayloadFor(point Point) Payload {
	switch point {
	case InputReceive:
		return new(InputPayload)
	case AgentBeforeStart:
		return new(AgentStartPayload)
	case ContextPrepare:
		return new(ContextPayload)
	case CompactionPrepare:
		return new(CompactionPreparePayload)
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
	return nil
}

func (p *ContextPayload) Validate(point Point) error {
	if point != ContextPrepare {
		return wrongPoint(p, point)
	}
	if p.Messages == nil {
		return errors.New("messages: must be an array (empty is [], never absent or null)")
	}
	return nil
}

func (p *CompactionPreparePayload) Validate(point Point) error {
	if point != CompactionPrepare {
		return wrongPoint(p, point)
	}
	if p.Messages == nil {
		return errors.New("messages: must be an array (empty is [], never absent or null)")
	}
	return nil
}

func (p *ProviderRequestPayload) Validate(point Point) error {
	if point != ProviderRequest {
		return wrongPoint(p, point)
	}
	r := p.Request
	if r.Messages == nil || r.Tools == nil {
		return errors.New("request.messages, request.tools: must be arrays (empty is [], never absent or null)")
	}
	if r.MaxTokens < 0 {
		return fmt.Errorf("request.maxTokens: must not be negative, got %d", r.MaxTokens)
	}
	if r.ResponseFormat != nil && strings.TrimSpace(r.ResponseFormat.Type) == "" {
		return errors.New("request.responseFormat.type: must be non-empty")
	}
	for i, t := range r.Tools {
		if jsonKind(t.Parameters) != '{' || !json.Valid(t.Parameters) {
			return fmt.Errorf("request.tools[%d].parameters: must be a JSON object", i)
		}
	}
	return nil
}

func (p *ProviderResponsePayload) Validate(point Point) error {
	if point != ProviderResponse {
		return wrongPoint(p, point)
	}
	for i, c := range p.Calls {
		if c.ID == "" || c.Name == "" {
			return fmt.Errorf("calls[%d]: id and name must be non-empty", i)
		}
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
	if p.WorkspaceRoot == "" {
		return errors.New("workspaceRoot: required")
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

func validateTool(name, args string) error {
	if name == "" {
		return errors.New("name: required")
	}
	if args == "" {
		return nil
	}
	if jsonKind([]byte(args)) != '{' || !json.Valid([]byte(args)) {
		return errors.New("arguments: must be empty or the text of a JSON object")
	}
	return nil
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
	p, err := DecodeShape(point, data)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(point); err != nil {
		return nil, fmt.Errorf("invalid %s payload: %w", point, err)
	}
	return p, nil
}

// DecodeShape is DecodeStrict without the validity rules: data must be
// the point's DTO, exactly, but may break its rules (an empty text, a
// hostDecision that is neither allow nor deny). It is the check of a host
// payload under choice D2.host-check=type-only.
func DecodeShape(point Point, data []byte) (Payload, error) {
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
