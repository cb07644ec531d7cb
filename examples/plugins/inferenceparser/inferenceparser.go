// Package inferenceparser is the inference-parser example plugin: a
// streaming parser that aggregates an LLM inference response into the
// "inference" extension. It reads OpenAI chat completions (data: {json}
// chunks ending in data: [DONE]), the OpenAI Responses API (event:
// response.created … response.completed), Anthropic messages (event:
// message_start … message_stop, with ping events) and Gemini
// generateContent / streamGenerateContent?alt=sse, streamed or as a JSON
// body. JSON-RPC traffic (MCP, A2A) is not inference and is left alone.
//
// In OnRequest it records the request (model, stream flag, messages, tool
// names) so that later plugins can inspect the prompt; at the last frame it
// stores the whole [Result]. The result never depends on how the response
// was chunked ([P19], P22), and nothing the host lends is kept (P24).
//
// [P19]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package inferenceparser

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/extension"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/sse"
)

// Name is the plugin's registered name.
const Name = "inference-parser"

// Key is the extension key the result is stored under.
const Key = "inference"

// Description is the one-line catalog description (P5).
const Description = "Parses LLM inference streams and bodies into the inference extension"

// Response styles.
const (
	StyleChatCompletions = "chat-completions"
	StyleMessages        = "messages"
	StyleResponses       = "responses"
	StyleGemini          = "gemini"
)

// Transports.
const (
	TransportSSE  = "sse"
	TransportJSON = "json"
)

// Result is the "inference" extension. Content, Reasoning, ToolCalls and
// FinishReason describe the first choice; Choices lists every choice only
// when the response had more than one.
type Result struct {
	Request   *Request `json:"request,omitempty"`
	Style     string   `json:"style,omitempty"`
	Transport string   `json:"transport,omitempty"`
	ID        string   `json:"id,omitempty"`
	Model     string   `json:"model,omitempty"`
	Content   string   `json:"content,omitempty"`
	// Reasoning is the model's reasoning text as the provider sent it:
	// Anthropic thinking, Gemini thought parts, the Responses API's
	// reasoning summary (or reasoning text), chat-completions
	// reasoning_content or reasoning (DeepSeek, OpenRouter, Groq, vLLM)
	// and Mistral's thinking content parts; each counted once.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls the client is to run, the legacy
	// function_call among them.
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	FinishReason string     `json:"finish_reason,omitempty"`
	// ServerToolCalls are the tools the provider ran itself (Anthropic
	// server_tool_use and mcp_tool_use blocks, Responses web_search_call,
	// mcp_call, …), each with its result when the response held it.
	ServerToolCalls []ServerToolCall `json:"server_tool_calls,omitempty"`
	// Refusal is the model's refusal text (OpenAI delta.refusal, Responses
	// refusal deltas) of the first choice.
	Refusal string `json:"refusal,omitempty"`
	// StopDetails is Anthropic's stop_details object (refusal category and
	// explanation), as compact JSON.
	StopDetails json.RawMessage `json:"stop_details,omitempty"`
	// Logprobs says the response carried log probabilities.
	Logprobs bool `json:"logprobs,omitempty"`
	// UnknownBlocks counts content blocks, output items and parts of types
	// the parser does not know; they are skipped, never fatal.
	UnknownBlocks int      `json:"unknown_blocks,omitempty"`
	Usage         *Usage   `json:"usage,omitempty"`
	Choices       []Choice `json:"choices,omitempty"`
	// Done says the response ended properly: data: [DONE], message_stop,
	// response.completed (or incomplete/failed), a Gemini finishReason; always
	// for a JSON body.
	Done bool `json:"done"`
	// Events counts the SSE events that carried data, pings included.
	Events int `json:"events,omitempty"`
	Pings  int `json:"pings,omitempty"`
	// Error is an error the upstream reported in the body.
	Error string `json:"error,omitempty"`
	// Malformed counts events (or a body) whose data was not the JSON
	// expected; they are skipped, never fatal.
	Malformed int `json:"malformed,omitempty"`
}

// Request is what the parser read from the request body.
type Request struct {
	Model    string    `json:"model,omitempty"`
	Stream   bool      `json:"stream"`
	System   string    `json:"system,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	Tools    []string  `json:"tools,omitempty"`
}

// Message is one request message with its text parts joined by newlines.
type Message struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// Choice is one aggregated choice.
type Choice struct {
	Index        int        `json:"index"`
	Content      string     `json:"content,omitempty"`
	Reasoning    string     `json:"reasoning,omitempty"`
	Refusal      string     `json:"refusal,omitempty"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	FinishReason string     `json:"finish_reason,omitempty"`
}

// ToolCall is one aggregated tool call; Arguments is the JSON text the
// model produced, concatenated from its deltas.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// ServerToolCall is one tool the provider ran: Type is the block or item
// type (server_tool_use, mcp_tool_use, web_search_call, mcp_call, …),
// Server the MCP server it went to. ResultType, Result (as compact JSON)
// and IsError describe the result block or output.
type ServerToolCall struct {
	Type       string          `json:"type"`
	ID         string          `json:"id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Server     string          `json:"server,omitempty"`
	Arguments  string          `json:"arguments,omitempty"`
	Status     string          `json:"status,omitempty"`
	ResultType string          `json:"result_type,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
}

// Usage is the token usage the upstream reported. ReasoningTokens is the
// part of the output spent on reasoning, where the provider says
// (completion_tokens_details, output_tokens_details, Gemini's
// thoughtsTokenCount).
type Usage struct {
	InputTokens     int `json:"input_tokens"`
	OutputTokens    int `json:"output_tokens"`
	TotalTokens     int `json:"total_tokens"`
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
}

// FromExchange returns the "inference" extension of ex, whether it is this
// package's Result or its JSON form from another process.
func FromExchange(ex *gateway.Exchange) (Result, bool) { return extension.Get[Result](ex, Key) }

// Factory registers the plugin. It takes no configuration.
func Factory() gateway.Factory {
	return gateway.Factory{
		Name: Name,
		New: func(json.RawMessage) (gateway.Plugin, error) {
			return &Parser{sse.NewParser[aggregator](Name, Description, Extension())}, nil
		},
	}
}

// Parser is an inference-parser instance; it is safe for concurrent
// exchanges because all per-exchange state lives on the exchange (P31).
type Parser struct {
	sse.Parser[aggregator, *aggregator]
}

var _ gateway.StreamingResponder = (*Parser)(nil)

// OnRequest records the request when the body looks like an inference
// request.
func (p *Parser) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	a := p.Begin(ex)
	a.res.Request, a.foreign = parseRequest(ex.RequestBody())
	if a.res.Request != nil {
		ex.SetExtension(Key, Result{Request: a.res.Request})
	}
	return gateway.Continue()
}

// aggregator builds a Result from the units of one response.
type aggregator struct {
	res     Result
	choices []*choiceAgg // by first appearance; sorted by index at the end
	blocks  map[int]*blockRef
	servers []*serverAgg // server tool calls, in order
	seen    bool         // the response held anything recognisable
	// foreign: the request was JSON-RPC (MCP, A2A), so the response is
	// that protocol's, even a bare {"error":…} an MCP server's OAuth
	// layer answers with: never claimed.
	foreign bool
	// textDeltas says a Responses stream sent output text as deltas, so a
	// finished output item's text is not added again; reasoningDeltas the
	// same for a reasoning item's summary and text.
	textDeltas, reasoningDeltas bool
	// w and fast are reused from event to event: decoding an event into
	// a fresh wire cost an allocation, and the fast path's buffers more.
	w    wire
	fast fastChat
}

// Done stores the result, if the response held anything recognisable.
func (a *aggregator) Done(ex *gateway.Exchange) {
	if res, ok := a.result(); ok {
		ex.SetExtension(Key, res)
	}
}

type choiceAgg struct {
	Choice
	content, reasoning, refusal strings.Builder
	calls                       []*callAgg
	callByIndex                 map[int]*callAgg
}

type callAgg struct {
	ToolCall
	args  strings.Builder
	input string // a messages-style tool_use block's initial input
}

type serverAgg struct {
	ServerToolCall
	args  strings.Builder
	input string // the block's initial input
}

// blockRef says what a messages-style content block index is.
type blockRef struct {
	kind   string // text, thinking, tool_use, other
	call   *callAgg
	server *serverAgg
}

// server returns the server tool call with id, adding one of type typ.
func (a *aggregator) server(typ, id string) *serverAgg {
	if id != "" {
		for _, s := range a.servers {
			if s.ID == id {
				if s.Type == "" {
					s.Type = typ // its result came first
				}
				return s
			}
		}
	}
	s := &serverAgg{ServerToolCall: ServerToolCall{Type: typ, ID: id}}
	a.servers = append(a.servers, s)
	return s
}

func (a *aggregator) choice(i int) *choiceAgg {
	for _, c := range a.choices {
		if c.Index == i {
			return c
		}
	}
	c := &choiceAgg{Choice: Choice{Index: i}}
	a.choices = append(a.choices, c)
	return c
}

// text adds a message's or a delta's text: refusal, content and
// reasoning (Mistral's thinking parts and the reasoning fields).
func (c *choiceAgg) text(m *chatMsg) {
	c.refusal.WriteString(m.Refusal)
	c.content.WriteString(m.Content.Text)
	c.reasoning.WriteString(m.Content.Thinking)
	c.reasoning.WriteString(m.reasoning())
}

func (c *choiceAgg) call(i int) *callAgg {
	if tc, ok := c.callByIndex[i]; ok {
		return tc
	}
	if c.callByIndex == nil {
		c.callByIndex = map[int]*callAgg{}
	}
	tc := &callAgg{}
	c.callByIndex[i] = tc
	c.calls = append(c.calls, tc)
	return tc
}

// Event handles one SSE event of any style.
func (a *aggregator) Event(ev sse.Event) {
	if a.foreign {
		return
	}
	a.res.Transport = TransportSSE
	a.res.Events++
	data := strings.TrimSpace(ev.Data)
	switch {
	case data == "[DONE]":
		a.res.Done = true
		a.setStyle(StyleChatCompletions)
		return
	case data == "":
		if ev.Event == "ping" {
			a.res.Pings++
		}
		return
	}
	w := &a.w // zero: release clears it after every event
	fast := a.fast.decode(sse.Bytes(data), w)
	defer a.release(fast)
	if !fast {
		*w = wire{} // the fast path may have filled part of it
		if err := json.Unmarshal(sse.Bytes(data), w); err != nil {
			a.eventError(ev)
			return
		}
	}
	a.event(ev, w)
}

// release drops what the last event left in the reused wire and the fast
// path's buffers: views of the host's frame among them (P24). After the
// fast path only the fields it sets are cleared: zeroing the whole wire,
// pointers and all, on every event was a measurable share of an event's
// cost.
func (a *aggregator) release(fast bool) {
	if fast {
		a.w.ID, a.w.Object, a.w.Model, a.w.Choices = "", "", "", nil
	} else {
		a.w = wire{}
	}
	a.fast.release()
}

// eventError counts an event whose data is not JSON.
func (a *aggregator) eventError(ev sse.Event) {
	if ev.Event == "ping" {
		// Another protocol's keep-alive (MCP servers send "data: ping").
		a.res.Pings++
		return
	}
	a.res.Malformed++
}

// event folds one decoded event.
func (a *aggregator) event(ev sse.Event, w *wire) {
	if w.JSONRPC != "" {
		return // MCP or A2A: not ours
	}
	typ := w.Type
	if typ == "" {
		typ = ev.Event
	}
	switch {
	case typ == "ping":
		a.res.Pings++
		a.setStyle(StyleMessages)
	case typ == "error":
		a.errorEvent(w)
	case strings.HasPrefix(typ, "response."):
		a.setStyle(StyleResponses)
		a.responsesEvent(typ, w)
	case isMessagesEvent(typ):
		a.setStyle(StyleMessages)
		a.messagesEvent(typ, w)
	case w.Candidates != nil || w.UsageMetadata != nil || w.PromptFeedback != nil:
		a.setStyle(StyleGemini)
		a.geminiChunk(w)
	case w.Choices != nil || strings.HasPrefix(w.Object, "chat.completion") || w.Usage != nil:
		a.setStyle(StyleChatCompletions)
		a.chatChunk(w)
	case w.Error != nil:
		a.res.Error = w.Error.String()
		a.seen = true
	default:
		a.res.Malformed++
	}
}

// Body handles a non-streamed JSON body of either style.
func (a *aggregator) Body(body []byte) {
	if a.foreign {
		return
	}
	a.res.Transport = TransportJSON
	var w wire
	if err := json.Unmarshal(body, &w); err != nil {
		a.res.Malformed++
		return
	}
	if w.JSONRPC != "" {
		return // MCP or A2A: not ours
	}
	switch {
	case w.Object == "response":
		a.setStyle(StyleResponses)
		a.responseObject(&w.responseFields)
		a.res.Done = true
	case w.Candidates != nil || w.UsageMetadata != nil:
		a.setStyle(StyleGemini)
		a.geminiChunk(&w)
		a.res.Done = true
	case w.Type == "message":
		a.setStyle(StyleMessages)
		a.res.ID, a.res.Model = w.ID, w.Model
		c := a.choice(0)
		for i, b := range w.Content {
			a.startBlock(c, i, b)
		}
		c.FinishReason = w.StopReason
		a.usage(w.Usage)
		a.res.Done = true
	case w.Choices != nil:
		a.setStyle(StyleChatCompletions)
		a.res.ID, a.res.Model = w.ID, w.Model
		for _, wc := range w.Choices {
			c := a.choice(wc.Index)
			if hasLogprobs(wc.Logprobs) {
				a.res.Logprobs = true
			}
			if m := wc.Message; m != nil {
				c.text(m)
				if fc := m.FunctionCall; fc != nil {
					call := c.call(0)
					call.Name = fc.Name
					call.args.WriteString(fc.Arguments)
				}
				for i, tc := range m.ToolCalls {
					call := c.call(i)
					call.ID, call.Name = tc.ID, tc.Function.Name
					call.args.WriteString(tc.Function.Arguments)
				}
			}
			if wc.FinishReason != nil {
				c.FinishReason = *wc.FinishReason
			}
		}
		a.usage(w.Usage)
		a.res.Done = true
	case w.Error != nil:
		a.res.Error = w.Error.String()
		a.seen = true
	default:
		a.res.Malformed++
	}
}

func (a *aggregator) setStyle(s string) {
	a.seen = true
	if a.res.Style == "" {
		a.res.Style = s
	}
}

// errorEvent reads an error event: Anthropic's {"type":"error","error":{…}},
// the Responses API's {"type":"error","code":…,"message":"…"}, or an
// OpenAI-compatible server's event: error with {"error":{…}}.
func (a *aggregator) errorEvent(w *wire) {
	switch {
	case w.Error != nil:
		a.seen = true
		if w.Type == "error" {
			a.setStyle(StyleMessages)
		}
		a.res.Error = w.Error.String()
	case w.Message != nil && w.Message.Text != "":
		a.setStyle(StyleResponses)
		e := wireError{Message: w.Message.Text}
		_ = json.Unmarshal(w.Code, &e.Type) // a string code, or none
		a.res.Error = e.String()
	default:
		a.res.Malformed++
	}
}

func isMessagesEvent(t string) bool {
	switch t {
	case "message_start", "message_delta", "message_stop",
		"content_block_start", "content_block_delta", "content_block_stop":
		return true
	}
	return false
}

// The strings of w may be views of the event's data (fastChat): what is
// kept is cloned.
func (a *aggregator) chatChunk(w *wire) {
	if a.res.ID == "" {
		a.res.ID = strings.Clone(w.ID)
	}
	if a.res.Model == "" {
		a.res.Model = strings.Clone(w.Model)
	}
	for _, wc := range w.Choices {
		c := a.choice(wc.Index)
		if hasLogprobs(wc.Logprobs) {
			a.res.Logprobs = true
		}
		if d := wc.Delta; d != nil {
			c.text(d)
			if fc := d.FunctionCall; fc != nil {
				// The legacy function_call: one call, streamed like a tool
				// call's function.
				call := c.call(0)
				if fc.Name != "" {
					call.Name = fc.Name
				}
				call.args.WriteString(fc.Arguments)
			}
			for j, tc := range d.ToolCalls {
				idx := j
				if tc.Index != nil {
					idx = *tc.Index
				}
				call := c.call(idx)
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if tc.Function.Name != "" {
					call.Name = tc.Function.Name
				}
				call.args.WriteString(tc.Function.Arguments)
			}
		}
		if wc.FinishReason != nil && *wc.FinishReason != "" && c.FinishReason != *wc.FinishReason {
			c.FinishReason = strings.Clone(*wc.FinishReason)
		}
	}
	a.usage(w.Usage)
	if w.Error != nil {
		a.res.Error = w.Error.String()
	}
}

func (a *aggregator) messagesEvent(typ string, w *wire) {
	c := a.choice(0)
	switch typ {
	case "message_start":
		if m := w.Message; m != nil {
			a.res.ID, a.res.Model = m.ID, m.Model
			a.usage(m.Usage)
		}
	case "content_block_start":
		if w.ContentBlock != nil && w.Index != nil {
			a.startBlock(c, *w.Index, *w.ContentBlock)
		}
	case "content_block_delta":
		if w.Delta == nil || w.Index == nil {
			return
		}
		ref := a.blocks[*w.Index]
		d := w.Delta
		switch d.Type {
		case "text_delta":
			c.content.WriteString(d.Text)
		case "thinking_delta":
			c.reasoning.WriteString(d.Thinking)
		case "input_json_delta":
			switch {
			case ref != nil && ref.call != nil:
				ref.call.args.WriteString(d.PartialJSON)
			case ref != nil && ref.server != nil:
				ref.server.args.WriteString(d.PartialJSON)
			}
		case "signature_delta", "citations_delta":
		default:
			a.res.UnknownBlocks++
		}
	case "message_delta":
		if w.Delta != nil && w.Delta.StopReason != nil {
			c.FinishReason = *w.Delta.StopReason
		}
		if w.Delta != nil && len(w.Delta.StopDetails) > 0 && string(w.Delta.StopDetails) != "null" {
			a.res.StopDetails = compact(w.Delta.StopDetails)
		}
		a.usage(w.Usage)
	case "message_stop":
		a.res.Done = true
	}
}

// startBlock opens a messages-style content block (streamed or in a body).
func (a *aggregator) startBlock(c *choiceAgg, index int, b wireBlock) {
	if a.blocks == nil {
		a.blocks = map[int]*blockRef{}
	}
	ref := &blockRef{kind: b.Type}
	switch b.Type {
	case "text":
		c.content.WriteString(b.Text)
	case "thinking":
		c.reasoning.WriteString(b.Thinking)
	case "tool_use":
		call := c.call(index)
		call.ID, call.Name = b.ID, b.Name
		call.input = string(b.Input)
		ref.call = call
	case "server_tool_use", "mcp_tool_use":
		// Run by Anthropic (web search, code execution) or by the MCP
		// server it connects to: not the client's to run.
		s := a.server(b.Type, b.ID)
		s.Name, s.Server, s.input = b.Name, b.ServerName, string(compact(b.Input))
		ref.server = s
	case "redacted_thinking", "tool_result":
	default:
		if b.ToolUseID != "" && strings.HasSuffix(b.Type, "_tool_result") {
			// web_search_tool_result, code_execution_tool_result,
			// mcp_tool_result, …: the result of a server tool call.
			s := a.server("", b.ToolUseID)
			s.ResultType, s.IsError = b.Type, b.IsError
			if len(b.Content) > 0 && string(b.Content) != "null" {
				s.Result = compact(b.Content)
			}
			break
		}
		// A block type newer than this parser (compaction, …): counted.
		a.res.UnknownBlocks++
	}
	a.blocks[index] = ref
}

func (a *aggregator) usage(u *wireUsage) {
	if u == nil {
		return
	}
	if a.res.Usage == nil {
		a.res.Usage = &Usage{}
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&a.res.Usage.InputTokens, u.PromptTokens)
	set(&a.res.Usage.InputTokens, u.InputTokens)
	set(&a.res.Usage.OutputTokens, u.CompletionTokens)
	set(&a.res.Usage.OutputTokens, u.OutputTokens)
	set(&a.res.Usage.TotalTokens, u.TotalTokens)
	set(&a.res.Usage.InputTokens, u.PromptTokenCount)
	set(&a.res.Usage.OutputTokens, u.CandidatesTokenCount)
	set(&a.res.Usage.TotalTokens, u.TotalTokenCount)
	set(&a.res.Usage.ReasoningTokens, u.ThoughtsTokenCount)
	for _, d := range []*tokenDetails{u.CompletionDetails, u.OutputDetails} {
		if d != nil {
			set(&a.res.Usage.ReasoningTokens, d.ReasoningTokens)
		}
	}
}

// responsesEvent handles one event of the OpenAI Responses API stream.
func (a *aggregator) responsesEvent(typ string, w *wire) {
	c := a.choice(0)
	switch typ {
	case "response.created", "response.in_progress":
		if r := w.Response; r != nil {
			a.res.ID, a.res.Model = r.ID, r.Model
		}
	case "response.output_text.delta":
		a.textDeltas = true
		c.content.WriteString(w.Delta.str())
		if hasLogprobs(w.Logprobs) {
			a.res.Logprobs = true
		}
	case "response.refusal.delta":
		a.textDeltas = true
		c.refusal.WriteString(w.Delta.str())
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		a.reasoningDeltas = true
		c.reasoning.WriteString(w.Delta.str())
	case "response.output_item.added":
		if it := w.Item; it != nil && it.Type == "function_call" && w.OutputIndex != nil {
			call := c.call(*w.OutputIndex)
			call.ID, call.Name = it.CallID, it.Name
		}
	case "response.function_call_arguments.delta":
		if w.OutputIndex != nil {
			c.call(*w.OutputIndex).args.WriteString(w.Delta.str())
		}
	case "response.output_item.done":
		if it := w.Item; it != nil {
			idx := 0
			if w.OutputIndex != nil {
				idx = *w.OutputIndex
			}
			a.outputItem(c, idx, it)
		}
	case "response.completed", "response.incomplete", "response.failed":
		a.res.Done = true
		if r := w.Response; r != nil {
			if a.res.ID == "" {
				a.res.ID, a.res.Model = r.ID, r.Model
			}
			c.FinishReason = r.Status
			a.usage(r.Usage)
			if r.Error != nil {
				a.res.Error = r.Error.String()
			}
		}
	}
}

// outputItem folds a finished Responses output item (from
// response.output_item.done or a response body): its text only when no
// deltas carried it, a function call's arguments when no deltas did.
func (a *aggregator) outputItem(c *choiceAgg, idx int, it *wireItem) {
	switch it.Type {
	case "message":
		if a.textDeltas {
			return
		}
		for _, p := range it.Content {
			if hasLogprobs(p.Logprobs) {
				a.res.Logprobs = true
			}
			switch p.Type {
			case "output_text":
				c.content.WriteString(p.Text)
			case "refusal":
				c.refusal.WriteString(p.Refusal)
			default:
				a.res.UnknownBlocks++
			}
		}
	case "function_call":
		call := c.call(idx)
		if call.ID == "" {
			call.ID = it.CallID
		}
		if call.Name == "" {
			call.Name = it.Name
		}
		if call.args.Len() == 0 {
			call.args.WriteString(it.Arguments)
		}
	case "mcp_call", "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call":
		// Tools the provider ran: the finished item is read once (from
		// response.output_item.done or the body).
		sv := a.server(it.Type, it.ID)
		sv.Name, sv.Server, sv.Status, sv.Arguments = it.Name, it.ServerLabel, it.Status, it.Arguments
		if sv.Arguments == "" && len(it.Action) > 0 && string(it.Action) != "null" {
			sv.Arguments = string(compact(it.Action)) // web_search_call's query
		}
		if len(it.Output) > 0 && string(it.Output) != "null" {
			sv.Result = compact(it.Output)
		}
		if len(it.Error) > 0 && string(it.Error) != "null" {
			sv.IsError, sv.Result = true, compact(it.Error)
		}
	case "mcp_list_tools":
	case "reasoning":
		if a.reasoningDeltas {
			return // the summary deltas carried it: counted once
		}
		for _, p := range it.Summary {
			c.reasoning.WriteString(p.Text)
		}
		for _, p := range it.Content {
			if p.Type == "reasoning_text" {
				c.reasoning.WriteString(p.Text)
			}
		}
	default:
		a.res.UnknownBlocks++
	}
}

// responseObject folds a whole Responses API response body.
func (a *aggregator) responseObject(r *responseFields) {
	a.res.ID, a.res.Model = r.ID, r.Model
	c := a.choice(0)
	for i := range r.Output {
		a.outputItem(c, i, &r.Output[i])
	}
	c.FinishReason = r.Status
	a.usage(r.Usage)
	if r.Error != nil {
		a.res.Error = r.Error.String()
	}
}

// geminiChunk folds one Gemini GenerateContentResponse (a stream chunk or
// the whole body).
func (a *aggregator) geminiChunk(w *wire) {
	if a.res.ID == "" {
		a.res.ID = w.ResponseID
	}
	if a.res.Model == "" {
		a.res.Model = w.ModelVersion
	}
	for _, cand := range w.Candidates {
		c := a.choice(cand.Index)
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					call := c.call(len(c.calls))
					call.ID, call.Name = p.FunctionCall.ID, p.FunctionCall.Name
					call.args.Write(compact(p.FunctionCall.Args))
				case p.Thought:
					c.reasoning.WriteString(p.Text)
				case p.Text != "":
					c.content.WriteString(p.Text)
				case p.ThoughtSignature != "":
				default:
					a.res.UnknownBlocks++
				}
			}
		}
		if cand.FinishReason != "" {
			c.FinishReason = cand.FinishReason
			a.res.Done = true
		}
	}
	a.usage(w.UsageMetadata)
	if w.Error != nil {
		a.res.Error = w.Error.String()
	}
}

// hasLogprobs reports whether raw carries log probabilities: a non-empty
// array (a Responses token list), or an object with a non-empty array
// member (chat's content or refusal list, legacy completions' tokens).
// null, [] and {"content":null,"refusal":null} carry none: servers send
// those on every chunk when logprobs were not asked for.
func hasLogprobs(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 {
		return false
	}
	switch raw[0] {
	case '[':
		return len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0
	case '{':
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return false
		}
		for _, v := range members {
			if v = bytes.TrimSpace(v); len(v) > 0 && v[0] == '[' && hasLogprobs(v) {
				return true
			}
		}
	}
	return false
}

// compact returns JSON without insignificant space, or raw as it is when
// it does not parse.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

// result finishes the aggregation. ok is false when neither the request nor
// the response was recognisable as inference traffic.
func (a *aggregator) result() (Result, bool) {
	res := a.res
	if !a.seen && res.Request == nil {
		return Result{}, false
	}
	slices.SortStableFunc(a.choices, func(x, y *choiceAgg) int { return x.Index - y.Index })
	choices := make([]Choice, len(a.choices))
	for i, c := range a.choices {
		ch := c.Choice
		ch.Content, ch.Reasoning, ch.Refusal = c.content.String(), c.reasoning.String(), c.refusal.String()
		for _, tc := range c.calls {
			call := tc.ToolCall
			call.Arguments = tc.args.String()
			if call.Arguments == "" && tc.input != "" && tc.input != "{}" {
				call.Arguments = tc.input
			}
			ch.ToolCalls = append(ch.ToolCalls, call)
		}
		choices[i] = ch
	}
	if len(choices) > 0 {
		first := choices[0]
		res.Content, res.Reasoning, res.ToolCalls, res.FinishReason = first.Content, first.Reasoning, first.ToolCalls, first.FinishReason
		res.Refusal = first.Refusal
	}
	if len(choices) > 1 {
		res.Choices = choices
	}
	for _, sv := range a.servers {
		call := sv.ServerToolCall
		if call.Arguments == "" && sv.args.Len() > 0 {
			call.Arguments = sv.args.String()
		} else if call.Arguments == "" && sv.input != "" && sv.input != "{}" {
			call.Arguments = sv.input
		}
		res.ServerToolCalls = append(res.ServerToolCalls, call)
	}
	if u := res.Usage; u != nil && u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return res, true
}

// wire covers the JSON of every style, streamed and not.
type wire struct {
	JSONRPC string       `json:"jsonrpc"`
	Object  string       `json:"object"`
	Choices []wireChoice `json:"choices"`
	responseFields

	// Responses API stream events.
	Response    *responseFields `json:"response"`
	Item        *wireItem       `json:"item"`
	OutputIndex *int            `json:"output_index"`

	// Gemini.
	Candidates     []wireCandidate `json:"candidates"`
	UsageMetadata  *wireUsage      `json:"usageMetadata"`
	PromptFeedback json.RawMessage `json:"promptFeedback"`
	ModelVersion   string          `json:"modelVersion"`
	ResponseID     string          `json:"responseId"`

	Type         string       `json:"type"`
	Message      *wireMessage `json:"message"`
	Index        *int         `json:"index"`
	ContentBlock *wireBlock   `json:"content_block"`
	// Code is a Responses API error event's code (a string or null);
	// Logprobs an output_text.delta event's token list.
	Code       json.RawMessage `json:"code"`
	Logprobs   json.RawMessage `json:"logprobs"`
	Delta      *wireDelta      `json:"delta"`
	Content    []wireBlock     `json:"content"`
	StopReason string          `json:"stop_reason"`
}

// responseFields are the fields a Responses API response object shares
// with the other styles' top level.
type responseFields struct {
	ID     string     `json:"id"`
	Model  string     `json:"model"`
	Usage  *wireUsage `json:"usage"`
	Error  *wireError `json:"error"`
	Status string     `json:"status"`
	Output []wireItem `json:"output"`
}

type wireItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Server tool items (mcp_call, web_search_call, …).
	ServerLabel string          `json:"server_label"`
	Status      string          `json:"status"`
	Action      json.RawMessage `json:"action"`
	Output      json.RawMessage `json:"output"`
	Error       json.RawMessage `json:"error"`
	Content     []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Refusal  string          `json:"refusal"`
		Logprobs json.RawMessage `json:"logprobs"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

type wireCandidate struct {
	Index   int `json:"index"`
	Content *struct {
		Parts []struct {
			Text             string `json:"text"`
			Thought          bool   `json:"thought"`
			ThoughtSignature string `json:"thoughtSignature"`
			FunctionCall     *struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
		} `json:"parts"`
	} `json:"content"`
	FinishReason string `json:"finishReason"`
}

type wireChoice struct {
	Logprobs     json.RawMessage `json:"logprobs"`
	Index        int             `json:"index"`
	Delta        *chatMsg        `json:"delta"`
	Message      *chatMsg        `json:"message"`
	FinishReason *string         `json:"finish_reason"`
}

type chatMsg struct {
	Refusal string      `json:"refusal"`
	Content chatContent `json:"content"`
	// ReasoningContent (DeepSeek, vLLM, Groq's older name) and Reasoning
	// (OpenRouter, Groq, vLLM) carry the same text: one is read.
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
	// FunctionCall is the legacy single call (functions, not tools).
	FunctionCall *struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function_call"`
}

// reasoning returns the message's reasoning text, counted once when a
// server sends it under both names.
func (m *chatMsg) reasoning() string {
	if m.ReasoningContent != "" {
		return m.ReasoningContent
	}
	return m.Reasoning
}

// chatContent is a chat message's content: a string, null, or an array of
// parts whose text parts are joined with newlines; Mistral's thinking
// parts ({"type":"thinking","thinking":[{"type":"text","text":…}]}) are
// the model's reasoning, kept apart.
type chatContent struct {
	Text, Thinking string
}

// UnmarshalJSON accepts a string, null or an array of content parts.
func (c *chatContent) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '[' {
		var t text
		err := json.Unmarshal(b, &t)
		c.Text = string(t)
		return err
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking text   `json:"thinking"`
		Content  text   `json:"content"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	var texts, thinking []string
	for _, p := range parts {
		if p.Type == "thinking" {
			thinking = append(thinking, string(p.Thinking))
			continue
		}
		for _, s := range []string{p.Text, string(p.Content)} {
			if s != "" {
				texts = append(texts, s)
			}
		}
	}
	c.Text, c.Thinking = strings.Join(texts, "\n"), strings.Join(thinking, "")
	return nil
}

type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens     *int `json:"prompt_tokens"`
	CompletionTokens *int `json:"completion_tokens"`
	TotalTokens      *int `json:"total_tokens"`
	InputTokens      *int `json:"input_tokens"`
	OutputTokens     *int `json:"output_tokens"`
	// Gemini usageMetadata.
	PromptTokenCount     *int `json:"promptTokenCount"`
	CandidatesTokenCount *int `json:"candidatesTokenCount"`
	TotalTokenCount      *int `json:"totalTokenCount"`
	ThoughtsTokenCount   *int `json:"thoughtsTokenCount"`
	// Reasoning tokens: chat's completion_tokens_details, the Responses
	// API's output_tokens_details.
	CompletionDetails *tokenDetails `json:"completion_tokens_details"`
	OutputDetails     *tokenDetails `json:"output_tokens_details"`
}

type tokenDetails struct {
	ReasoningTokens *int `json:"reasoning_tokens"`
}

type wireMessage struct {
	ID    string     `json:"id"`
	Model string     `json:"model"`
	Usage *wireUsage `json:"usage"`
	// Text is a message given as a string: the Responses API's error
	// event has "message":"…" where Anthropic's message_start has an
	// object.
	Text string `json:"-"`
}

// UnmarshalJSON accepts a message object or a string.
func (m *wireMessage) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &m.Text)
	}
	type plain wireMessage
	return json.Unmarshal(b, (*plain)(m))
}

type wireBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	// Server tool blocks: mcp_tool_use's server, a result's call id,
	// content and error flag.
	ServerName string          `json:"server_name"`
	ToolUseID  string          `json:"tool_use_id"`
	Content    json.RawMessage `json:"content"`
	IsError    bool            `json:"is_error"`
}

type wireDelta struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	Thinking    string          `json:"thinking"`
	PartialJSON string          `json:"partial_json"`
	StopReason  *string         `json:"stop_reason"`
	StopDetails json.RawMessage `json:"stop_details"`
	// S is a Responses API delta, which is a bare string.
	S string `json:"-"`
}

// UnmarshalJSON accepts a delta object or, in Responses API events, a
// string.
func (d *wireDelta) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &d.S)
	}
	type plain wireDelta
	return json.Unmarshal(b, (*plain)(d))
}

func (d *wireDelta) str() string {
	if d == nil {
		return ""
	}
	return d.S
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Status  string `json:"status"` // Gemini
	// Code is a string (the Responses API's rate_limit_exceeded) or a
	// number (Gemini's 499, an OpenAI-compatible server's 502).
	Code json.RawMessage `json:"code"`
}

func (e *wireError) String() string {
	if e.Type == "" && e.Status == "" && len(e.Code) > 0 && e.Code[0] == '"' {
		_ = json.Unmarshal(e.Code, &e.Type)
	}
	switch {
	case e.Type != "" && e.Message != "":
		return e.Type + ": " + e.Message
	case e.Status != "" && e.Message != "":
		return e.Status + ": " + e.Message
	case e.Message != "":
		return e.Message
	}
	return e.Type
}

// UnmarshalJSON accepts the error as an object or a bare string.
func (e *wireError) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		e.Message = s
		return nil
	}
	type plain wireError
	return json.Unmarshal(b, (*plain)(e))
}

// text is message content: a string, null, or an array of parts whose text
// is joined with newlines.
type text string

// UnmarshalJSON accepts a string, null or an array of content parts.
func (t *text) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		var parts []struct {
			Text    string `json:"text"`
			Content text   `json:"content"` // tool_result blocks nest content
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			for _, s := range []string{p.Text, string(p.Content)} {
				if s == "" {
					continue
				}
				if sb.Len() > 0 {
					sb.WriteByte('\n')
				}
				sb.WriteString(s)
			}
		}
		*t = text(sb.String())
		return nil
	}
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s != nil {
		*t = text(*s)
	}
	return nil
}

// parseRequest reads an inference request body; nil when it is not one.
// jsonRPC says the body is a JSON-RPC request or batch (MCP, A2A).
func parseRequest(body []byte) (req *Request, jsonRPC bool) {
	if len(body) == 0 {
		return nil, false
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		var batch []struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if json.Unmarshal(t, &batch) == nil && len(batch) > 0 && batch[0].JSONRPC != "" {
			return nil, true
		}
		return nil, false
	}
	type geminiContent struct {
		Role  string `json:"role"`
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	var w struct {
		JSONRPC           string          `json:"jsonrpc"`
		Model             *string         `json:"model"`
		Stream            bool            `json:"stream"`
		System            text            `json:"system"`
		Instructions      text            `json:"instructions"`
		Input             json.RawMessage `json:"input"`
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction"`
		Messages          []struct {
			Role    string `json:"role"`
			Content text   `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name     string `json:"name"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil || w.JSONRPC != "" || (w.Model == nil && w.Messages == nil && w.Contents == nil) {
		return nil, err == nil && w.JSONRPC != ""
	}
	req = &Request{Stream: w.Stream, System: string(w.System)}
	if w.Model != nil {
		req.Model = *w.Model
	}
	if req.System == "" {
		req.System = string(w.Instructions)
	}
	for _, m := range w.Messages {
		req.Messages = append(req.Messages, Message{Role: m.Role, Text: string(m.Content)})
	}
	// The Responses API's input: a string, or a list of messages.
	if len(w.Input) > 0 {
		var one string
		var list []struct {
			Role    string `json:"role"`
			Content text   `json:"content"`
		}
		if json.Unmarshal(w.Input, &one) == nil {
			req.Messages = append(req.Messages, Message{Role: "user", Text: one})
		} else if json.Unmarshal(w.Input, &list) == nil {
			for _, m := range list {
				if m.Role != "" {
					req.Messages = append(req.Messages, Message{Role: m.Role, Text: string(m.Content)})
				}
			}
		}
	}
	// Gemini's contents (the model is in the URL).
	for _, c := range w.Contents {
		var texts []string
		for _, p := range c.Parts {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		req.Messages = append(req.Messages, Message{Role: c.Role, Text: strings.Join(texts, "\n")})
	}
	if w.SystemInstruction != nil {
		var texts []string
		for _, p := range w.SystemInstruction.Parts {
			texts = append(texts, p.Text)
		}
		req.System = strings.Join(texts, "\n")
	}
	for _, t := range w.Tools {
		name := t.Name
		if t.Function != nil {
			name = t.Function.Name
		}
		req.Tools = append(req.Tools, name)
	}
	return req, false
}

// Plugin bundles the factory for the catalog and for serving as a binary.
func Plugin() sdk.Plugin {
	f := Factory()
	return sdk.Plugin{Name: Name, Description: Description, Pipeline: &f}
}
