package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// auth rejects requests without an Authorization header.
type auth struct{}

func (auth) Name() string { return "auth" }
func (auth) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Rejects requests without credentials"}
}
func (auth) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	if ex.Request.Header.Get("Authorization") == "" {
		return gateway.Reject(401, "no credentials")
	}
	return gateway.Continue()
}
func (auth) OnResponse(context.Context, *gateway.Exchange) gateway.Action { return gateway.Continue() }

// tokens counts streamed frames per exchange in typed state and reports the
// count when the exchange finishes.
type tokens struct{}

var frames = gateway.NewKey[int]("frames")

func (tokens) Name() string { return "tokens" }
func (tokens) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Counts streamed events", Requires: []string{"auth"}}
}
func (tokens) OnRequest(context.Context, *gateway.Exchange) gateway.Action { return gateway.Continue() }
func (tokens) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (tokens) OnResponseFrame(_ context.Context, ex *gateway.Exchange, frame []byte, last bool) gateway.Action {
	if !last {
		n, _ := gateway.GetState(ex, frames)
		gateway.SetState(ex, frames, n+1)
	}
	return gateway.Continue()
}
func (tokens) OnFinish(_ context.Context, ex *gateway.Exchange) error {
	n, _ := gateway.GetState(ex, frames)
	o, _ := ex.Outcome()
	fmt.Printf("tokens: %d frames, outcome %s\n", n, o.Kind)
	return nil
}

// guard stops a stream that leaks a secret; it runs under observe here, so
// its rejection is only recorded as a shadow decision.
type guard struct{}

func (guard) Name() string { return "guard" }
func (guard) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Stops streams that leak secrets"}
}
func (guard) OnRequest(context.Context, *gateway.Exchange) gateway.Action  { return gateway.Continue() }
func (guard) OnResponse(context.Context, *gateway.Exchange) gateway.Action { return gateway.Continue() }
func (guard) OnResponseFrame(_ context.Context, _ *gateway.Exchange, frame []byte, _ bool) gateway.Action {
	if strings.Contains(string(frame), "sk-") {
		return gateway.Reject(451, "secret in stream")
	}
	return gateway.Continue()
}

func factory(p gateway.Plugin) gateway.Factory {
	return gateway.Factory{Name: p.Name(), New: func(json.RawMessage) (gateway.Plugin, error) { return p, nil }}
}

// Example builds a three-plugin chain and runs one streamed exchange through
// it, printing the trace compactly.
func Example() {
	spec := pipeline.Spec{Direction: gateway.Outbound, Entries: []pipeline.Entry{
		{Plugin: "auth"}, {Plugin: "tokens"}, {Plugin: "guard", OnError: pipeline.Observe},
	}}
	chain, err := pipeline.Build(spec, []gateway.Factory{factory(auth{}), factory(tokens{}), factory(guard{})}, pipeline.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := chain.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer chain.Stop(ctx)

	rec := trace.NewRecorder()
	client := &pipeline.BufferClient{}
	req := pipeline.Request{Request: gateway.Request{Method: "POST", URL: "https://llm.example/v1/chat", Header: http.Header{"Authorization": {"Bearer x"}}}}
	up := pipeline.Upstream{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: []byte("data: hello\n\n: ping\n\ndata: sk-123\n\n")}
	res := chain.Run(ctx, req, up, pipeline.ExchangeOptions{Trace: rec, Client: client})

	for _, e := range rec.Events() {
		line := fmt.Sprintf("%d %s %s %s", e.Seq, e.Hook, e.Plugin, e.Action)
		if e.Frame != nil {
			line += fmt.Sprintf(" frame=%d", *e.Frame)
		}
		if e.Last {
			line += " last"
		}
		if e.Shadow {
			line += fmt.Sprintf(" shadow(%d %s)", e.Status, e.Reason)
		}
		fmt.Println(line)
	}
	fmt.Printf("client: %d, %q\n", client.Status, client.Body.String())
	fmt.Printf("outcome: %s, shadows: %d\n", res.Outcome.Kind, len(res.Shadows))
	// Output:
	// tokens: 2 frames, outcome allow
	// 1 on_request auth continue
	// 2 on_request tokens continue
	// 3 on_request guard continue
	// 4 on_response_frame guard continue frame=0
	// 5 on_response_frame tokens continue frame=0
	// 6 on_response_frame guard reject frame=1 shadow(451 secret in stream)
	// 7 on_response_frame tokens continue frame=1
	// 8 on_response_frame guard continue frame=2 last
	// 9 on_response_frame tokens continue frame=2 last
	// 10 on_finish tokens continue
	// client: 200, "data: hello\n\n: ping\n\ndata: sk-123\n\n"
	// outcome: allow, shadows: 1
}
