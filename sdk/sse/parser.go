package sse

import (
	"context"
	"slices"

	"github.com/abkit/abkit/sdk/gateway"
)

// Session is one exchange's parse of its response: the Handler a Reader
// feeds, and what it stores once the response is complete.
type Session interface {
	Handler
	// Done is called once, after the last frame was fed; it stores the
	// result on ex if there is one.
	Done(ex *gateway.Exchange)
}

// Parser is the scaffold of a streaming parser (the example parsers
// mcp-parser, a2a-parser and inference-parser embed it): the name,
// capabilities that read bodies, write none (P3) and declare the extensions
// the parser writes (X1), an OnResponse that
// is never called (P23) and an OnResponseFrame that feeds the exchange's
// session of type S through a Reader (P19, P22, P24). All per-exchange
// state lives on the exchange (P31), so a Parser is safe for concurrent
// exchanges. A parser embeds it and adds its own OnRequest, which starts
// the session with Begin.
type Parser[S any, PS interface {
	*S
	Session
}] struct {
	name, description string
	writes            []gateway.ExtensionSpec
	key               gateway.Key[*session[S]]
}

type session[S any] struct {
	reader Reader
	s      S
}

// NewParser returns the shared part of the parser registered as name, with
// the one-line description (P5) its capabilities report and the
// extensions it writes (gateway.Writes), which they declare.
func NewParser[S any, PS interface {
	*S
	Session
}](name, description string, writes ...gateway.ExtensionSpec) Parser[S, PS] {
	return Parser[S, PS]{name: name, description: description, writes: writes, key: gateway.NewKey[*session[S]](name)}
}

// Name returns the registered name (P1).
func (p *Parser[S, PS]) Name() string { return p.name }

// Capabilities: reads bodies, streams, and declares the extensions given
// to NewParser.
func (p *Parser[S, PS]) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{ReadsBody: true, Description: p.description, Extensions: slices.Clone(p.writes)}
}

// Begin gives ex a fresh session and returns it; OnRequest calls it.
func (p *Parser[S, PS]) Begin(ex *gateway.Exchange) PS {
	st := &session[S]{}
	gateway.SetState(ex, p.key, st)
	return &st.s
}

// OnResponse is never called for a streaming plugin (P23).
func (*Parser[S, PS]) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// OnResponseFrame feeds one frame to the exchange's session; after the
// last one the session stores its result.
func (p *Parser[S, PS]) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	st, ok := gateway.GetState(ex, p.key)
	if !ok { // a host that skipped OnRequest: parse the response anyway
		st = &session[S]{}
		gateway.SetState(ex, p.key, st)
	}
	s := PS(&st.s)
	st.reader.Feed(ContentType(&st.reader, ex), frame, last, s)
	if last {
		s.Done(ex)
	}
	return gateway.Continue()
}

// ContentType is the response's content type for r.Feed, read from the
// header only while r has not decided what the body is: a header lookup
// per frame and parser was a measurable share of a replay.
func ContentType(r *Reader, ex *gateway.Exchange) string {
	if r.Decided() {
		return ""
	}
	return ex.Response.Header.Get("Content-Type")
}
