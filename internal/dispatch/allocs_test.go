//go:build !race

// The race detector adds allocations of its own, so the allocation budget
// is checked in normal builds only.

package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/abkit/abkit/sdk/intercept"
)

// TestWalkAllocs pins the allocation budget: the continue walk allocates no
// more than encoding the payload does.
func TestWalkAllocs(t *testing.T) {
	var cs []Contribution
	for i := range 6 {
		cs = append(cs, contrib(fmt.Sprintf("ext-%d", i), contExt{}, intercept.ToolBefore))
	}
	d, err := New(cs, Options{QueueSize: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p := &intercept.ToolBeforePayload{Name: "ls", Arguments: json.RawMessage(`{"dir":"/"}`), CallID: "c1"}
	enc := testing.AllocsPerRun(200, func() { json.Marshal(p) })
	walk := testing.AllocsPerRun(200, func() {
		d.Dispatch(context.Background(), Request{Point: intercept.ToolBefore, Payload: p})
	})
	if walk > enc {
		t.Errorf("walk allocates %v per op, encoding alone %v: the walk itself allocates", walk, enc)
	}
}
