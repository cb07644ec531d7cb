// Package guardrail is the guardrail example plugin: it rejects an exchange
// whose request or response text matches a blocked phrase or regular
// expression.
//
// On the request side it checks the text the parsers extracted (inference
// messages and system prompt, MCP tool names, arguments and URIs, A2A
// message text), falling back to the raw body when no parser recognised the
// traffic; it therefore requires at least one of the three parsers earlier
// in the chain ([P8]). On the response side it streams: it checks the text of
// each frame as it passes and rejects mid-stream (P25), so the client gets a
// stream truncated before the offending frame. Text from earlier frames is
// carried over (see Config.Window), so a phrase split across frames is
// caught too.
//
// [P8]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package guardrail

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/sse"
)

// Name is the plugin's registered name.
const Name = "guardrail"

// Description is the one-line catalog description (P5).
const Description = "Rejects requests and streamed responses that match blocked phrases or regexes"

// DefaultWindow is how many runes of earlier response text are kept.
const DefaultWindow = 256

// Config is the plugin's configuration block. At least one phrase or
// pattern is required.
type Config struct {
	Phrases       []string `json:"phrases,omitempty"`
	Patterns      []string `json:"patterns,omitempty"`
	CaseSensitive bool     `json:"case_sensitive,omitempty"`
	// Status is the rejection status, 400–599.
	Status int `json:"status,omitempty"`
	// Window is how many runes of earlier response text are carried into
	// the check of the next frame; it is raised to the longest phrase.
	Window int `json:"window,omitempty"`
	// Check says which side is checked: request, response or both.
	Check string `json:"check,omitempty"`
}

var schema = &gateway.ConfigSchema{Fields: []gateway.Field{
	{Name: "phrases", Type: "array", Description: "Blocked phrases, matched as plain text"},
	{Name: "patterns", Type: "array", Description: "Blocked RE2 regular expressions"},
	{Name: "case_sensitive", Type: "boolean", Default: false, Description: "Match phrases and patterns case-sensitively"},
	{Name: "status", Type: "integer", Default: 403, Description: "HTTP status of a rejection (400-599)"},
	{Name: "window", Type: "integer", Default: DefaultWindow, Description: "Runes of earlier response text matched with each new frame"},
	{Name: "check", Type: "string", Default: "both", Enum: []string{"request", "response", "both"}, Description: "Which side of the exchange is checked"},
}}

// Schema returns the configuration schema.
func Schema() *gateway.ConfigSchema { return schema }

// Factory registers the plugin.
func Factory() gateway.Factory {
	return config.Factory(Name, schema, New)
}

type rule struct {
	label  string // phrases[0] ("drop table")
	phrase string // a phrase, lower-cased unless case-sensitive; "" for a pattern
	re     *regexp.Regexp
}

// Guardrail is a guardrail instance; read-only after New, safe for concurrent
// exchanges (per-exchange state lives on the exchange, P31).
type Guardrail struct {
	rules             []rule
	fold              bool // phrases are matched case-insensitively
	longest           int  // bytes of the longest phrase as matched
	status            int
	window            int
	request, response bool
	key               gateway.Key[*state]
}

// New makes an instance from a decoded config.
func New(c Config) (*Guardrail, error) {
	if len(c.Phrases) == 0 && len(c.Patterns) == 0 {
		return nil, fmt.Errorf("%s config: no rules; give at least one entry in phrases or patterns", Name)
	}
	p := &Guardrail{status: 403, window: DefaultWindow, key: gateway.NewKey[*state](Name)}
	if c.Status != 0 {
		if c.Status < 400 || c.Status > 599 {
			return nil, fmt.Errorf("%s config: field \"status\": %d is not a 4xx or 5xx status", Name, c.Status)
		}
		p.status = c.Status
	}
	if c.Window < 0 {
		return nil, fmt.Errorf("%s config: field \"window\": %d is negative", Name, c.Window)
	} else if c.Window > 0 {
		p.window = c.Window
	}
	switch c.Check {
	case "", "both":
		p.request, p.response = true, true
	case "request":
		p.request = true
	case "response":
		p.response = true
	default:
		return nil, fmt.Errorf("%s config: field \"check\": %q is not one of request, response, both", Name, c.Check)
	}
	flags := "(?i)"
	if c.CaseSensitive {
		flags = ""
	}
	p.fold = !c.CaseSensitive
	for i, ph := range c.Phrases {
		if ph == "" {
			return nil, fmt.Errorf("%s config: phrases[%d] is empty", Name, i)
		}
		// Phrases are plain substring checks: much cheaper than (?i) regexps
		// on the per-frame hot path.
		if !c.CaseSensitive {
			ph = strings.ToLower(ph)
		}
		p.rules = append(p.rules, rule{label: fmt.Sprintf("phrases[%d] (%q)", i, c.Phrases[i]), phrase: ph})
		// A phrase split across frames must fit in the carried text.
		p.window = max(p.window, utf8.RuneCountInString(ph))
		p.longest = max(p.longest, len(ph))
	}
	for i, pat := range c.Patterns {
		re, err := regexp.Compile(flags + pat)
		if err != nil {
			return nil, fmt.Errorf("%s config: patterns[%d] %q: %w", Name, i, pat, err)
		}
		p.rules = append(p.rules, rule{label: fmt.Sprintf("patterns[%d] (%q)", i, pat), re: re})
	}
	return p, nil
}

var _ gateway.StreamingResponder = (*Guardrail)(nil)

// Name returns "guardrail".
func (*Guardrail) Name() string { return Name }

// Capabilities: reads bodies, needs one of the parsers.
func (*Guardrail) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{
		ReadsBody:   true,
		RequiresAny: []string{mcpparser.Name, a2aparser.Name, inferenceparser.Name},
		Description: Description,
		// Any one of the parsers will do (RequiresAny), so each read is
		// optional.
		Extensions: []gateway.ExtensionSpec{
			{Key: inferenceparser.Key, Reads: true, Optional: true, Description: "the prompt and the model's text"},
			{Key: mcpparser.Key, Reads: true, Optional: true, Description: "tool call arguments and results"},
			{Key: a2aparser.Key, Reads: true, Optional: true, Description: "task requests, messages and artifacts"},
		},
	}
}

// match returns the label of the first rule that matches s.
func (p *Guardrail) match(s string) (string, bool) {
	folded := s
	if p.fold {
		folded = strings.ToLower(s)
	}
	for _, r := range p.rules {
		if r.phrase != "" {
			if strings.Contains(folded, r.phrase) {
				return r.label, true
			}
		} else if r.re.MatchString(s) {
			return r.label, true
		}
	}
	return "", false
}

// matchFrom is match for text s, folded its case-folded form (s when
// matching is case-sensitive), whose phrases can only match at or after
// byte from of folded: the label of the first rule that matches.
func (p *Guardrail) matchFrom(s, folded string, from int) (string, bool) {
	for _, r := range p.rules {
		if r.phrase != "" {
			if strings.Contains(folded[from:], r.phrase) {
				return r.label, true
			}
		} else if r.re.MatchString(s) {
			return r.label, true
		}
	}
	return "", false
}

// rejectJSON rejects with a JSON error body, in the shape API clients of
// the LLM providers parse (P34), instead of the runtime's plain text.
func rejectJSON(status int, reason string) gateway.Action {
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"type": "guardrail_blocked", "message": reason}})
	return gateway.RejectWith(status, reason, gateway.Rejection{Body: body, ContentType: "application/json"})
}

// OnRequest checks the request text the parsers extracted.
func (p *Guardrail) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	if !p.request {
		return gateway.Continue()
	}
	for _, text := range requestTexts(ex) {
		if label, ok := p.match(text); ok {
			return rejectJSON(p.status, fmt.Sprintf("blocked by guardrail rule %s in the request", label))
		}
	}
	return gateway.Continue()
}

// requestTexts gathers what the parsers found, or the raw body.
func requestTexts(ex *gateway.Exchange) []string {
	var out []string
	parsed := false
	if r, ok := inferenceparser.FromExchange(ex); ok && r.Request != nil {
		parsed = true
		out = append(out, r.Request.System)
		for _, m := range r.Request.Messages {
			out = append(out, m.Text)
		}
	}
	if r, ok := mcpparser.FromExchange(ex); ok {
		parsed = true
		for _, c := range r.Requests {
			out = append(out, c.Name, string(c.Arguments), c.URI)
			out = append(out, jsonTexts(c.Arguments, true)...)
		}
	}
	if r, ok := a2aparser.FromExchange(ex); ok {
		parsed = true
		out = append(out, r.RequestText)
	}
	if !parsed && len(ex.RequestBody()) > 0 {
		out = append(out, string(ex.RequestBody()))
	}
	return out
}

// OnResponse is never called for a streaming plugin (P23).
func (*Guardrail) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// OnResponseFrame checks the frame's text with the text carried from
// earlier frames and rejects at the first match (P25).
func (p *Guardrail) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	if !p.response {
		return gateway.Continue()
	}
	st, ok := gateway.GetState(ex, p.key)
	if !ok {
		st = newState(p)
		gateway.SetState(ex, p.key, st)
	}
	if st.hit != "" {
		return gateway.Continue() // already rejected; the host stops the stream
	}
	st.reader.Feed(sse.ContentType(&st.reader, ex), frame, last, st)
	if st.hit != "" {
		return gateway.Reject(p.status, fmt.Sprintf("blocked by guardrail rule %s in the response", st.hit))
	}
	return gateway.Continue()
}

type state struct {
	p      *Guardrail
	reader sse.Reader
	tail   []byte // the last runes of response text, up to p.window: a suffix of buf
	hit    string // the rule that matched
	// texts is reused from event to event, so that checking an event
	// allocates nothing in the common case: it holds the event's texts
	// (views of its data).
	texts []string
	// buf holds tail at its end, and each text is appended after it: the
	// joined text is buf's suffix, so the tail is not copied to the front
	// for every text, only when buf is full (see join). Each frame's work
	// is in proportion to its own text, not to the window.
	buf []byte
	// ftail is tail folded (case-insensitive phrases), a suffix of fbuf,
	// which is to ftail what buf is to tail. tailValid says tail is valid
	// UTF-8, which folding text alone needs.
	ftail, fbuf []byte
	tailValid   bool
	tailASCII   bool // tail is ASCII
}

// eventRoom is the room for one event's text the joined buffers get at
// first, and maxRoom the most room a tail gets at first (a large window
// fills only as a long stream's text does); more grows them.
const eventRoom, maxRoom = 256, 1024

// newState returns an exchange's state, its two text buffers cut from one
// allocation with room for twice an ASCII window and an event's text: they
// grew by doubling otherwise, a dozen allocations in every stream's first
// events, and the room past the window is what join fills before it
// moves the tail back to the front.
func newState(p *Guardrail) *state {
	n := 2*min(p.window, maxRoom) + eventRoom
	b := make([]byte, 2*n)
	// Each cut ends where the next begins (full slice expressions), so
	// that an append past its room moves it rather than overwriting.
	return &state{p: p, tailValid: true, tailASCII: true, buf: b[0:0:n], fbuf: b[n : n : 2*n]}
}

// Event checks the text of one SSE event.
func (st *state) Event(ev sse.Event) {
	if st.hit != "" {
		return
	}
	data := sse.Bytes(ev.Data)
	texts, ok := appendTexts(st.texts[:0], data, false)
	if !ok && !validJSON(data) {
		texts = append(texts, ev.Data) // plain-text events are text too
	}
	for _, t := range texts {
		st.check(t)
	}
	clear(texts) // hold no view of the borrowed data past the call
	st.texts = texts[:0]
}

// Body checks the text of a whole non-streamed body.
func (st *state) Body(body []byte) {
	texts := jsonTexts(body, false)
	if texts == nil && !validJSON(body) {
		texts = []string{string(body)}
	}
	for _, t := range texts {
		st.check(t)
	}
}

// join appends text to buf, whose suffix is tail, lower-cased with fold
// (ascii says text is ASCII), and returns buf and the joined text, tail
// then text, a suffix of it. The tail moves to buf's front only when text
// does not fit after it, so that across a stream the moves cost about a
// byte per byte of text rather than a window per text.
func join(buf, tail []byte, text string, fold, ascii bool) (_, joined []byte) {
	if len(text) > cap(buf)-len(buf) {
		// tail is buf's suffix: the overlapping copy is a memmove.
		buf = append(buf[:0], tail...)
	}
	n := len(buf) - len(tail)
	switch {
	case !fold:
		buf = append(buf, text...)
	case ascii:
		buf = appendLowerASCII(buf, text)
	default:
		buf = append(buf, strings.ToLower(text)...)
	}
	return buf, buf[n:]
}

// check matches the carried text joined with text. The phrases are
// searched only where a match can end in text: one wholly inside the
// carried tail would have matched before. With case folding the tail is
// kept folded too, so that only text is lower-cased, and each frame
// costs work in proportion to its own text, not to the window; the
// regular expressions still run over the whole joined text.
func (st *state) check(text string) {
	if st.hit != "" || text == "" {
		return
	}
	p := st.p
	ascii := isASCII(text)
	var joined, fjoined []byte
	st.buf, joined = join(st.buf, st.tail, text, false, ascii)
	// A view of buf: match keeps nothing, and the tail stays in buf.
	s := unsafe.String(unsafe.SliceData(joined), len(joined))
	folded, from, inc := s, 0, false
	if p.fold {
		// Folding text alone gives the fold of the joined text when both
		// are valid UTF-8 (strings.ToLower maps rune to rune); otherwise
		// the joined text is folded whole, as a rune may span the join.
		if st.tailValid && (ascii || utf8.ValidString(text)) {
			st.fbuf, fjoined = join(st.fbuf, st.ftail, text, true, ascii)
			folded = unsafe.String(unsafe.SliceData(fjoined), len(fjoined))
			from, inc = max(0, len(st.ftail)-p.longest+1), true
		} else {
			folded = strings.ToLower(s)
		}
	} else {
		from = max(0, len(st.tail)-p.longest+1)
	}
	if label, ok := p.matchFrom(s, folded, from); ok {
		st.hit = label
		return
	}
	st.keep(joined, fjoined, inc, ascii)
}

// keep cuts the new tail from joined, the text check matched, and the
// folded tail from fjoined, its fold when inc (else the tail is folded
// anew, if it is valid UTF-8); ascii says the text check added is ASCII.
// Both tails are suffixes of their buffers, views, not copies.
func (st *state) keep(joined, fjoined []byte, inc, ascii bool) {
	p := st.p
	// The tail's runes: when the tail and text are ASCII, bytes are runes
	// (lastRunes would check the window's bytes again).
	ascii = ascii && st.tailASCII
	if ascii {
		st.tail = joined[len(joined)-min(len(joined), p.window):]
	} else {
		s := unsafe.String(unsafe.SliceData(joined), len(joined))
		st.tail = joined[len(joined)-len(lastRunes(s, p.window)):]
		st.tailASCII = isASCII(unsafe.String(unsafe.SliceData(st.tail), len(st.tail)))
	}
	switch {
	case !p.fold:
	case inc && ascii:
		st.ftail = fjoined[len(fjoined)-len(st.tail):]
	case inc:
		// Valid UTF-8 folds rune for rune: the last runes of the folded
		// text are the fold of the tail.
		f := unsafe.String(unsafe.SliceData(fjoined), len(fjoined))
		st.ftail = fjoined[len(fjoined)-len(lastRunes(f, p.window)):]
	default:
		st.tailValid = utf8.Valid(st.tail)
		if st.tailValid {
			st.fbuf = appendLower(st.fbuf[:0], string(st.tail))
			st.ftail = st.fbuf
		}
	}
}

// appendLower appends strings.ToLower(s) to b, without allocating when s
// is ASCII.
func appendLower(b []byte, s string) []byte {
	if !isASCII(s) {
		return append(b, strings.ToLower(s)...)
	}
	return appendLowerASCII(b, s)
}

// appendLowerASCII is appendLower for ASCII s.
func appendLowerASCII(b []byte, s string) []byte {
	n := len(b)
	b = append(b, s...)
	for i := n; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// lastRunes returns the suffix of s holding its last n runes (all of s
// when it is shorter); the caller copies what it keeps.
func lastRunes(s string, n int) string {
	if len(s) <= n { // bytes ≥ runes
		return s
	}
	// The common case, ASCII text: the last n bytes are the last n runes
	// when they and the byte before them are ASCII (that byte then ends a
	// rune, so the cut splits none).
	if ascii := s[len(s)-n-1:]; isASCII(ascii) {
		return s[len(s)-n:]
	}
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// textKeys are the JSON keys whose string values are model or tool text in
// the inference, MCP and A2A formats.
var textKeys = map[string]bool{
	"content": true, "text": true, "thinking": true, "reasoning_content": true,
	"partial_json": true, "arguments": true,
}

// jsonTexts returns the text-bearing strings of a JSON document in order;
// nil when data is not JSON. With all, every string value counts. Object
// members are visited in sorted key order (a repeated key counts once, its
// last value), so the carried text, and so the verdict, is deterministic.
//
// It runs on every response frame, so it scans the validated text in place
// rather than decoding it into maps: only the strings it returns are
// copied.
func jsonTexts(data []byte, all bool) []string {
	out, ok := appendTexts(nil, data, all)
	if !ok {
		return nil
	}
	for i, t := range out {
		out[i] = strings.Clone(t)
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// jsonString decodes a valid JSON string token. Plain ASCII is returned
// as a view of tok, not a copy; escapes and other bytes go through
// encoding/json, which also turns invalid UTF-8 into U+FFFD as decoding
// the document would.
func jsonString(tok []byte) string {
	raw := tok[1 : len(tok)-1]
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			var s string
			_ = json.Unmarshal(tok, &s) // valid: checked by jsonTexts
			return s
		}
	}
	return unsafe.String(unsafe.SliceData(raw), len(raw))
}

func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}

// Plugin bundles the factory for the catalog and for serving as a binary.
func Plugin() sdk.Plugin {
	f := Factory()
	return sdk.Plugin{Name: Name, Description: Description, Pipeline: &f}
}
