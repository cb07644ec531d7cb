// Package inferenceparser is the inference-parser example plugin: a
// streaming parser that aggregates an LLM inference response into the
// "inference" extension, for chat-completions-style streams (data: {json}
// chunks ending in data: [DONE]) and messages-style streams (event:
// message_start … message_stop, with ping events), and for the non-streamed
// JSON bodies of both.
//
// In OnRequest it records the request (model, stream flag, messages, tool
// names) so that later plugins can inspect the prompt; at the last frame it
// stores the whole [Result]. The result never depends on how the response
// was chunked (P19, P22), and nothing the host lends is kept (P24).
package inferenceparser

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/abkit/abkit/examples/plugins/internal/bodystream"
	"github.com/abkit/abkit/examples/plugins/internal/extval"
	"github.com/abkit/abkit/internal/sse"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
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
	Request      *Request   `json:"request,omitempty"`
	Style        string     `json:"style,omitempty"`
	Transport    string     `json:"transport,omitempty"`
	ID           string     `json:"id,omitempty"`
	Model        string     `json:"model,omitempty"`
	Content      string     `json:"content,omitempty"`
	Reasoning    string     `json:"reasoning,omitempty"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	FinishReason string     `json:"finish_reason,omitempty"`
	Usage        *Usage     `json:"usage,omitempty"`
	Choices      []Choice   `json:"choices,omitempty"`
	// Done says the response ended properly: data: [DONE] or message_stop
	// for a stream, always for a JSON body.
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

// Usage is the token usage the upstream reported.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// FromExchange returns the "inference" extension of ex, whether it is this
// package's Result or its JSON form from another process.
func FromExchange(ex *gateway.Exchange) (Result, bool) { return extval.Get[Result](ex, Key) }

// Factory registers the plugin. It takes no configuration.
func Factory() gateway.Factory {
	return gateway.Factory{
		Name: Name,
		New: func(json.RawMessage) (gateway.Plugin, error) {
			return &Parser{bodystream.NewParser[aggregator](Name, Description)}, nil
		},
	}
}

// Parser is an inference-parser instance; it is safe for concurrent
// exchanges because all per-exchange state lives on the exchange (P31).
type Parser struct {
	bodystream.Parser[aggregator, *aggregator]
}

var _ gateway.StreamingResponder = (*Parser)(nil)

// OnRequest records the request when the body looks like an inference
// request.
func (p *Parser) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	a := p.Begin(ex)
	a.res.Request = parseRequest(ex.RequestBody())
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
	seen    bool // the response held anything recognisable
}

// Done stores the result, if the response held anything recognisable.
func (a *aggregator) Done(ex *gateway.Exchange) {
	if res, ok := a.result(); ok {
		ex.SetExtension(Key, res)
	}
}

type choiceAgg struct {
	Choice
	content, reasoning strings.Builder
	calls              []*callAgg
	callByIndex        map[int]*callAgg
}

type callAgg struct {
	ToolCall
	args  strings.Builder
	input string // a messages-style tool_use block's initial input
}

// blockRef says what a messages-style content block index is.
type blockRef struct {
	kind string // text, thinking, tool_use, other
	call *callAgg
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

// Event handles one SSE event of either style.
func (a *aggregator) Event(ev sse.Event) {
	a.res.Transport = TransportSSE
	a.res.Events++
	data := strings.TrimSpace(ev.Data)
	switch {
	case ev.Event == "ping":
		a.res.Pings++
		a.setStyle(StyleMessages)
		return
	case data == "[DONE]":
		a.res.Done = true
		a.setStyle(StyleChatCompletions)
		return
	case data == "":
		return
	}
	var w wire
	if err := json.Unmarshal([]byte(data), &w); err != nil {
		a.res.Malformed++
		return
	}
	typ := w.Type
	if typ == "" {
		typ = ev.Event
	}
	switch {
	case typ == "ping":
		a.res.Pings++
		a.setStyle(StyleMessages)
	case isMessagesEvent(typ):
		a.setStyle(StyleMessages)
		a.messagesEvent(typ, &w)
	case w.Choices != nil || strings.HasPrefix(w.Object, "chat.completion") || w.Usage != nil:
		a.setStyle(StyleChatCompletions)
		a.chatChunk(&w)
	case w.Error != nil:
		a.res.Error = w.Error.String()
		a.seen = true
	default:
		a.res.Malformed++
	}
}

// Body handles a non-streamed JSON body of either style.
func (a *aggregator) Body(body []byte) {
	a.res.Transport = TransportJSON
	var w wire
	if err := json.Unmarshal(body, &w); err != nil {
		a.res.Malformed++
		return
	}
	switch {
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
			if m := wc.Message; m != nil {
				c.content.WriteString(string(m.Content))
				c.reasoning.WriteString(m.ReasoningContent)
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

func isMessagesEvent(t string) bool {
	switch t {
	case "message_start", "message_delta", "message_stop",
		"content_block_start", "content_block_delta", "content_block_stop", "error":
		return true
	}
	return false
}

func (a *aggregator) chatChunk(w *wire) {
	if a.res.ID == "" {
		a.res.ID = w.ID
	}
	if a.res.Model == "" {
		a.res.Model = w.Model
	}
	for _, wc := range w.Choices {
		c := a.choice(wc.Index)
		if d := wc.Delta; d != nil {
			c.content.WriteString(string(d.Content))
			c.reasoning.WriteString(d.ReasoningContent)
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
		if wc.FinishReason != nil && *wc.FinishReason != "" {
			c.FinishReason = *wc.FinishReason
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
			if ref != nil && ref.call != nil {
				ref.call.args.WriteString(d.PartialJSON)
			}
		}
	case "message_delta":
		if w.Delta != nil && w.Delta.StopReason != nil {
			c.FinishReason = *w.Delta.StopReason
		}
		a.usage(w.Usage)
	case "message_stop":
		a.res.Done = true
	case "error":
		if w.Error != nil {
			a.res.Error = w.Error.String()
		}
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
	case "tool_use", "server_tool_use":
		call := c.call(index)
		call.ID, call.Name = b.ID, b.Name
		call.input = string(b.Input)
		ref.call = call
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
		ch.Content, ch.Reasoning = c.content.String(), c.reasoning.String()
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
	}
	if len(choices) > 1 {
		res.Choices = choices
	}
	if u := res.Usage; u != nil && u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return res, true
}

// wire covers the JSON of both styles, streamed and not.
type wire struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *wireError   `json:"error"`

	Type         string       `json:"type"`
	Message      *wireMessage `json:"message"`
	Index        *int         `json:"index"`
	ContentBlock *wireBlock   `json:"content_block"`
	Delta        *wireDelta   `json:"delta"`
	Content      []wireBlock  `json:"content"`
	StopReason   string       `json:"stop_reason"`
}

type wireChoice struct {
	Index        int      `json:"index"`
	Delta        *chatMsg `json:"delta"`
	Message      *chatMsg `json:"message"`
	FinishReason *string  `json:"finish_reason"`
}

type chatMsg struct {
	Content          text           `json:"content"`
	ReasoningContent string         `json:"reasoning_content"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
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
}

type wireMessage struct {
	ID    string     `json:"id"`
	Model string     `json:"model"`
	Usage *wireUsage `json:"usage"`
}

type wireBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

type wireDelta struct {
	Type        string  `json:"type"`
	Text        string  `json:"text"`
	Thinking    string  `json:"thinking"`
	PartialJSON string  `json:"partial_json"`
	StopReason  *string `json:"stop_reason"`
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (e *wireError) String() string {
	switch {
	case e.Type != "" && e.Message != "":
		return e.Type + ": " + e.Message
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
func parseRequest(body []byte) *Request {
	if len(body) == 0 {
		return nil
	}
	var w struct {
		Model    *string `json:"model"`
		Stream   bool    `json:"stream"`
		System   text    `json:"system"`
		Messages []struct {
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
	if err := json.Unmarshal(body, &w); err != nil || (w.Model == nil && w.Messages == nil) {
		return nil
	}
	req := &Request{Stream: w.Stream, System: string(w.System)}
	if w.Model != nil {
		req.Model = *w.Model
	}
	for _, m := range w.Messages {
		req.Messages = append(req.Messages, Message{Role: m.Role, Text: string(m.Content)})
	}
	for _, t := range w.Tools {
		name := t.Name
		if t.Function != nil {
			name = t.Function.Name
		}
		req.Tools = append(req.Tools, name)
	}
	return req
}

// Plugin bundles the factory for the catalog and for serving as a binary.
func Plugin() sdk.Plugin {
	f := Factory()
	return sdk.Plugin{Name: Name, Description: Description, Pipeline: &f}
}
