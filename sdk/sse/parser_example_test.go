package sse_test

import (
	"context"
	"fmt"

	"github.com/abkit/abkit/sdk/extension"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
	"github.com/abkit/abkit/sdk/sse"
)

// counts is one exchange's parse: the Session a Parser feeds.
type counts struct {
	Events int      `json:"events"`
	Types  []string `json:"types,omitempty"`
}

func (c *counts) Event(ev sse.Event) {
	c.Events++
	if ev.Event != "" {
		c.Types = append(c.Types, ev.Event) // a string: Event is copied, never a view
	}
}

func (*counts) Body([]byte) {}

// Done stores the result for later plugins.
func (c *counts) Done(ex *gateway.Exchange) { ex.SetExtension("counts", *c) }

// counter is a streaming parser: the scaffold plus its own OnRequest.
type counter struct {
	sse.Parser[counts, *counts]
}

func (p *counter) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	p.Begin(ex) // a fresh session on the exchange (P31)
	return gateway.Continue()
}

// A streaming parser built on Parser gets each event once, whatever the
// chunking, and keeps its state on the exchange.
func ExampleParser() {
	p := &counter{sse.NewParser[counts]("event-counter", "Counts the events of a stream")}
	r := plugintest.NewRun("POST", "/v1/chat", nil)
	r.Request(context.Background(), p)
	r.Respond(200, "text/event-stream")
	stream := []byte("event: delta\ndata: a\n\nevent: delta\ndata: b\n\ndata: [DONE]\n\n")
	r.Frames(context.Background(), plugintest.Split(stream, 7), p)

	got, _ := extension.Get[counts](r.Ex, "counts")
	fmt.Println(got.Events, got.Types)
	// Output: 3 [delta delta]
}
