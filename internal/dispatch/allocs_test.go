//go:build !race

// The race detector adds allocations of its own, so the allocation budget
// is checked in normal builds only.

package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/abkit/abkit/sdk/intercept"
)

// countExt continues every call and counts the events it is notified of,
// so a test can wait for the event worker.
type countExt struct{ n *atomic.Int64 }

func (countExt) Call(context.Context, intercept.Point, json.RawMessage) (intercept.Answer, error) {
	return intercept.Answer{Decision: intercept.DecisionContinue}, nil
}
func (e countExt) Notify(intercept.Point, json.RawMessage) error { e.n.Add(1); return nil }

// TestWalkAllocs pins the allocation budget: a continue walk of six
// extensions, including the event worker's six deliveries, allocates no
// more than encoding the payload does. Each run waits until the worker has
// notified all six observers, so the worker's allocations fall inside the
// measured run instead of racing past its end.
func TestWalkAllocs(t *testing.T) {
	var seen atomic.Int64
	var cs []Contribution
	for i := range 6 {
		cs = append(cs, contrib(fmt.Sprintf("ext-%d", i), countExt{&seen}, intercept.ToolBefore))
	}
	d, err := New(cs, Options{QueueSize: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p := &intercept.ToolBeforePayload{Name: "ls", Arguments: `{"dir":"/"}`}
	enc := testing.AllocsPerRun(200, func() { json.Marshal(p) })
	var want int64
	walk := testing.AllocsPerRun(200, func() {
		want += 6
		if _, err := d.Dispatch(context.Background(), Request{Point: intercept.ToolBefore, Payload: p}); err != nil {
			panic(err)
		}
		for seen.Load() < want { // the worker's deliveries belong to this run
			runtime.Gosched()
		}
	})
	if walk > enc {
		t.Errorf("walk and its event deliveries allocate %v per op, encoding alone %v: the walk or the event worker allocates", walk, enc)
	}
}

// TestDeliverAllocs measures the event worker's delivery directly: in
// steady state it allocates nothing per delivery.
func TestDeliverAllocs(t *testing.T) {
	var seen atomic.Int64
	var cs []Contribution
	for i := range 6 {
		cs = append(cs, contrib(fmt.Sprintf("ext-%d", i), countExt{&seen}, intercept.ToolBefore))
	}
	d, err := New(cs, Options{QueueSize: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	job := eventJob{pt: d.points[intercept.ToolBefore], payload: json.RawMessage(`{"name":"ls"}`)}
	if n := testing.AllocsPerRun(200, func() { d.deliver(job) }); n != 0 {
		t.Errorf("delivering one event to six observers allocates %v times; want 0", n)
	}
	if got := seen.Load(); got != 6*201 {
		t.Errorf("observers notified %d times; want %d", got, 6*201)
	}
}
