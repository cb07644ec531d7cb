package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/abkit/abkit/sdk/intercept"
)

// contExt answers continue immediately, like a fast in-process extension.
type contExt struct{}

func (contExt) Call(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
	return intercept.Answer{Decision: intercept.DecisionContinue}, nil
}
func (contExt) Notify(intercept.Point, json.RawMessage) error { return nil }

// replExt replaces the tool arguments with a fixed payload.
type replExt struct{ r json.RawMessage }

func (e replExt) Call(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
	return intercept.Answer{Decision: intercept.DecisionReplace, Replacement: e.r}, nil
}
func (replExt) Notify(intercept.Point, json.RawMessage) error { return nil }

func benchDispatcher(b *testing.B, replaceAt int) *Dispatcher {
	var cs []Contribution
	for i := range 6 {
		var ext intercept.Extension = contExt{}
		if i == replaceAt {
			ext = replExt{json.RawMessage(`{"name":"ls","arguments":"{\"dir\":\"/tmp\"}"}`)}
		}
		cs = append(cs, contrib(fmt.Sprintf("ext-%d", i), ext, intercept.ToolBefore))
	}
	d, err := New(cs, Options{QueueSize: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

// BenchmarkEncodePayload is the host payload encoding alone, the baseline
// the walk benchmarks include.
func BenchmarkEncodePayload(b *testing.B) {
	p := &intercept.ToolBeforePayload{Name: "ls", Arguments: `{"dir":"/"}`}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWalkContinue6 is a 6-extension all-continue walk at tool.before
// with a typed payload (includes its encoding) and no trace.
func BenchmarkWalkContinue6(b *testing.B) {
	d := benchDispatcher(b, -1)
	p := &intercept.ToolBeforePayload{Name: "ls", Arguments: `{"dir":"/"}`}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Dispatch(ctx, Request{Point: intercept.ToolBefore, Payload: p}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWalkContinue6Raw is the same walk with a pre-encoded payload
// whose validation is the strict decode.
func BenchmarkWalkContinue6Raw(b *testing.B) {
	d := benchDispatcher(b, -1)
	raw := json.RawMessage(`{"name":"ls","arguments":"{\"dir\":\"/\"}"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Dispatch(ctx, Request{Point: intercept.ToolBefore, Payload: raw}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWalkReplace6 is a 6-extension walk where the third replaces.
func BenchmarkWalkReplace6(b *testing.B) {
	d := benchDispatcher(b, 2)
	p := &intercept.ToolBeforePayload{Name: "ls", Arguments: `{"dir":"/"}`}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Dispatch(ctx, Request{Point: intercept.ToolBefore, Payload: p}); err != nil {
			b.Fatal(err)
		}
	}
}
