// Package a2aparser is the a2a-parser example plugin: a streaming parser of
// A2A (Agent2Agent) JSON-RPC traffic. It follows a task through its status
// updates (submitted, working, completed, …) and assembles its artifacts
// from artifact updates (append and lastChunk honoured), whether they come
// as an SSE stream (message/stream) or as one JSON body (message/send,
// tasks/get).
//
// In OnRequest it records the request's method, id and message text under
// the "a2a" extension; at the last frame it stores the whole [Result]. The
// result does not depend on how the response was chunked ([P19], P22) and
// keeps no borrowed bytes (P24).
//
// [P19]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package a2aparser

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/extension"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/jsonrpc"
	"github.com/abkit/abkit/sdk/sse"
)

// Name is the plugin's registered name.
const Name = "a2a-parser"

// Key is the extension key the result is stored under.
const Key = "a2a"

// Description is the one-line catalog description (P5).
const Description = "Parses A2A task status and artifact updates into the a2a extension"

// Result is the "a2a" extension.
type Result struct {
	// Method, RequestID and RequestText come from the request body.
	Method      string `json:"method,omitempty"`
	RequestID   string `json:"request_id,omitempty"`
	RequestText string `json:"request_text,omitempty"`

	// Transport is how the response came: sse or json.
	Transport string `json:"transport,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	ContextID string `json:"context_id,omitempty"`
	// State is the task's last state; States lists each state change in
	// order.
	State  string   `json:"state,omitempty"`
	States []string `json:"states,omitempty"`
	// Final says a status update was marked final or the task reached a
	// terminal state (completed, canceled, failed, rejected).
	Final     bool       `json:"final"`
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// Messages are the texts of the agent's messages, in order.
	Messages []string       `json:"messages,omitempty"`
	Error    *jsonrpc.Error `json:"error,omitempty"`
	// Malformed counts events (or a body) that held no valid JSON-RPC.
	Malformed int `json:"malformed,omitempty"`
}

// Artifact is one assembled task artifact.
type Artifact struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Text joins the text parts.
	Text string `json:"text,omitempty"`
	// Parts counts every part, text or not.
	Parts int `json:"parts"`
	// LastChunk says the last artifact update was marked lastChunk.
	LastChunk bool `json:"last_chunk,omitempty"`
}

// FromExchange returns the "a2a" extension of ex, whether it is this
// package's Result or its JSON form from another process.
func FromExchange(ex *gateway.Exchange) (Result, bool) { return extension.Get[Result](ex, Key) }

// Factory registers the plugin. It takes no configuration.
func Factory() gateway.Factory {
	return gateway.Factory{
		Name: Name,
		New: func(json.RawMessage) (gateway.Plugin, error) {
			return &Parser{sse.NewParser[state](Name, Description, Extension())}, nil
		},
	}
}

// Parser is an a2a-parser instance, safe for concurrent exchanges: all
// per-exchange state lives on the exchange (P31).
type Parser struct {
	sse.Parser[state, *state]
}

var _ gateway.StreamingResponder = (*Parser)(nil)

// OnRequest records the request's method, id and message text.
func (p *Parser) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	st := p.Begin(ex)
	if body := ex.RequestBody(); len(body) > 0 {
		if method := restMethod(ex.Request.URL); method != "" {
			// The HTTP+JSON binding: the method is in the path, the body is
			// the params.
			var params struct {
				Message *wireMessage `json:"message"`
			}
			if json.Unmarshal(body, &params) == nil {
				st.res.Method, st.seen, st.rest = method, true, true
				if params.Message != nil {
					st.res.RequestText, _ = params.Message.text()
				}
				ex.SetExtension(Key, st.res)
			}
		} else if msgs, err := jsonrpc.Parse(body); err == nil && msgs[0].V2() && msgs[0].Method != "" && !jsonrpc.A2AMethod(msgs[0].Method) {
			st.foreign = jsonrpc.MCPMethod(msgs[0].Method)
		} else if err == nil && msgs[0].V2() && msgs[0].Method != "" {
			m := msgs[0]
			st.res.Method, st.res.RequestID = m.Method, m.ID
			var params struct {
				Message *wireMessage `json:"message"`
			}
			if json.Unmarshal(m.Params, &params) == nil && params.Message != nil {
				st.res.RequestText, _ = params.Message.text()
			}
			st.seen = true
			ex.SetExtension(Key, st.res)
		}
	}
	return gateway.Continue()
}

type state struct {
	res       Result
	seen      bool
	artifacts []*artifactAgg
	// foreign: the request is another JSON-RPC protocol's (MCP); nothing is
	// claimed.
	foreign bool
	// rest: the HTTP+JSON binding, whose bodies and events are bare A2A
	// objects without a JSON-RPC envelope.
	rest bool
}

// restMethod returns the A2A HTTP+JSON binding method a request URL names
// (message:send, message:stream, tasks/ID:subscribe, …), or "".
func restMethod(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	for _, m := range []string{"/message:send", "/message:stream"} {
		if strings.HasSuffix(u, m) {
			return m[1:]
		}
	}
	if i := strings.LastIndex(u, "/tasks/"); i >= 0 {
		rest := u[i+len("/tasks/"):]
		if j := strings.LastIndex(rest, ":"); j >= 0 {
			return "tasks:" + rest[j+1:]
		}
	}
	return ""
}

// Done stores the result, if the exchange held A2A traffic.
func (st *state) Done(ex *gateway.Exchange) {
	if st.seen && !st.foreign {
		ex.SetExtension(Key, st.result())
	}
}

type artifactAgg struct {
	Artifact
	text strings.Builder
}

// Event reads one SSE event.
func (st *state) Event(ev sse.Event) {
	st.res.Transport = "sse"
	if strings.TrimSpace(ev.Data) != "" {
		st.add(sse.Bytes(ev.Data)) // add copies what it keeps
	}
}

// Body reads a JSON body.
func (st *state) Body(body []byte) {
	st.res.Transport = "json"
	st.add(body)
}

func (st *state) add(data []byte) {
	if st.foreign {
		return
	}
	var msgs []jsonrpc.Message
	err := jsonrpc.ErrNotJSONRPC // what Parse says, or a decoding error: both mean the same here
	if jsonrpc.MayHoldMessage(data) {
		msgs, err = jsonrpc.Parse(data)
	}
	if err == nil {
		msgs = jsonrpc.V2Only(msgs) // only the 2.0 envelope is evidence of A2A
	}
	if err != nil || len(msgs) == 0 {
		if st.rest && jsonrpc.A2AResult(data) {
			// The HTTP+JSON binding: a bare StreamResponse or Task.
			var r wireResult
			if json.Unmarshal(data, &r) == nil {
				st.seen = true
				st.apply(&r)
				return
			}
		}
		// Counted, but only A2A objects make the exchange A2A traffic.
		st.res.Malformed++
		return
	}
	for _, m := range msgs {
		if jsonrpc.MCPMethod(m.Method) {
			return // MCP: mcp-parser's traffic
		}
		// The shape check decodes the result once more: done until the
		// exchange is known to be A2A.
		if !st.seen && m.IsResponse() && m.Error == nil && jsonrpc.A2AResult(m.Result) {
			st.seen = true
		}
	}
	for _, m := range msgs {
		if !m.IsResponse() {
			continue
		}
		if m.Error != nil {
			if st.seen {
				st.res.Error = m.Error
			}
			continue
		}
		var r wireResult
		if err := json.Unmarshal(m.Result, &r); err != nil {
			st.res.Malformed++
			continue
		}
		st.apply(&r)
	}
}

// apply folds one result object: a task, a message, a status update or an
// artifact update. Objects without kind (older servers) are told apart by
// their fields.
func (st *state) apply(r *wireResult) {
	if w, kind := r.wrapped(); w != nil {
		w.Kind = kind
		st.apply(w)
		return
	}
	kind := r.Kind
	if kind == "" {
		switch {
		case r.Artifact != nil:
			kind = "artifact-update"
		case r.Status != nil && r.Final != nil:
			kind = "status-update"
		case r.Status != nil:
			kind = "task"
		case r.Parts != nil:
			kind = "message"
		}
	}
	switch kind {
	case "task":
		st.ids(r.ID, r.ContextID)
		st.status(r.Status, false)
		for _, a := range r.Artifacts {
			st.artifact(a, false, false)
		}
	case "status-update":
		st.ids(r.TaskID, r.ContextID)
		st.status(r.Status, r.Final != nil && *r.Final)
	case "artifact-update":
		st.ids(r.TaskID, r.ContextID)
		if r.Artifact != nil {
			st.artifact(*r.Artifact, r.Append, r.LastChunk)
		}
	case "message":
		st.ids(r.TaskID, r.ContextID)
		m := wireMessage{Parts: r.Parts}
		if t, _ := m.text(); t != "" {
			st.res.Messages = append(st.res.Messages, t)
		}
	default:
		st.res.Malformed++
	}
}

func (st *state) ids(task, ctx string) {
	if task != "" {
		st.res.TaskID = task
	}
	if ctx != "" {
		st.res.ContextID = ctx
	}
}

func (st *state) status(s *wireStatus, final bool) {
	if final {
		st.res.Final = true
	}
	if s == nil {
		return
	}
	state := normState(s.State)
	if state != "" && state != st.res.State {
		st.res.State = state
		st.res.States = append(st.res.States, state)
	}
	switch state {
	case "completed", "canceled", "failed", "rejected":
		st.res.Final = true
	}
	if s.Message != nil {
		if t, _ := s.Message.text(); t != "" {
			st.res.Messages = append(st.res.Messages, t)
		}
	}
}

func (st *state) artifact(a wireArtifact, appendParts, lastChunk bool) {
	var agg *artifactAgg
	for _, x := range st.artifacts {
		if x.ID == a.ArtifactID {
			agg = x
			break
		}
	}
	if agg == nil {
		agg = &artifactAgg{Artifact: Artifact{ID: a.ArtifactID}}
		st.artifacts = append(st.artifacts, agg)
	} else if !appendParts {
		// A non-append update replaces the artifact's content.
		agg.text.Reset()
		agg.Parts = 0
	}
	if a.Name != "" {
		agg.Name = a.Name
	}
	m := wireMessage{Parts: a.Parts}
	t, n := m.text()
	agg.text.WriteString(t) // appended chunks continue the text as streamed
	agg.Parts += n
	agg.LastChunk = lastChunk
}

func (st *state) result() Result {
	res := st.res
	res.Artifacts = nil
	for _, a := range st.artifacts {
		art := a.Artifact
		art.Text = a.text.String()
		res.Artifacts = append(res.Artifacts, art)
	}
	return res
}

// normState maps an A2A 1.0 state (TASK_STATE_INPUT_REQUIRED) to the 0.3
// name (input-required), so policies see one vocabulary; TASK_STATE_CANCELLED
// is canceled, as 0.3 spells it.
func normState(s string) string {
	if !strings.HasPrefix(s, "TASK_STATE_") {
		return s
	}
	s = strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(s, "TASK_STATE_"), "_", "-"))
	if s == "cancelled" {
		s = "canceled"
	}
	return s
}

type wireResult struct {
	// A2A 1.0 wrappers.
	Task           *wireResult `json:"task"`
	StatusUpdate   *wireResult `json:"statusUpdate"`
	ArtifactUpdate *wireResult `json:"artifactUpdate"`
	Msg            *wireResult `json:"msg"`
	Message        *wireResult `json:"message"`

	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    *wireStatus    `json:"status"`
	Final     *bool          `json:"final"`
	Artifact  *wireArtifact  `json:"artifact"`
	Artifacts []wireArtifact `json:"artifacts"`
	Append    bool           `json:"append"`
	LastChunk bool           `json:"lastChunk"`
	Parts     []wirePart     `json:"parts"`
}

// wrapped returns the object an A2A 1.0 wrapper field of r holds, which
// names its kind, and that kind; nil when r is not a wrapper.
func (r *wireResult) wrapped() (*wireResult, string) {
	switch {
	case r.Task != nil:
		return r.Task, "task"
	case r.StatusUpdate != nil:
		return r.StatusUpdate, "status-update"
	case r.ArtifactUpdate != nil:
		return r.ArtifactUpdate, "artifact-update"
	case r.Msg != nil:
		return r.Msg, "message"
	case r.Message != nil && r.Kind == "" && r.Parts == nil:
		return r.Message, "message"
	}
	return nil, ""
}

type wireStatus struct {
	State   string       `json:"state"`
	Message *wireMessage `json:"message"`
}

type wireArtifact struct {
	ArtifactID string     `json:"artifactId"`
	Name       string     `json:"name"`
	Parts      []wirePart `json:"parts"`
}

type wireMessage struct {
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Kind string `json:"kind"`
	Type string `json:"type"` // older servers
	Text string `json:"text"`
}

// text joins the message's text parts with newlines and counts all parts.
func (m wireMessage) text() (string, int) {
	var texts []string
	for _, p := range m.Parts {
		if p.Kind == "text" || p.Type == "text" || (p.Kind == "" && p.Type == "" && p.Text != "") {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), len(m.Parts)
}

// Plugin bundles the factory for the catalog and for serving as a binary.
func Plugin() sdk.Plugin {
	f := Factory()
	return sdk.Plugin{Name: Name, Description: Description, Pipeline: &f}
}
