package dispatch

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/abkit/abkit/sdk/intercept"
)

// gatedFake holds every Notify until release is closed.
type gatedFake struct {
	fake
	release chan struct{}
}

func (g *gatedFake) Notify(p intercept.Point, payload json.RawMessage) error {
	<-g.release
	return g.fake.Notify(p, payload)
}

// D20, D11: the event carries the final payload as it was when the walk
// ended. With a raw host payload and no replace, Result.Payload is the
// host's own bytes (D11), and the host may reuse that buffer once Dispatch
// returns; the queued event must not change with it.
func TestEventOwnsHostBytesD20D11(t *testing.T) {
	g := &gatedFake{release: make(chan struct{})}
	d, _ := build(t, contrib("obs", g, intercept.ToolBefore))
	buf := []byte(`{"name":"ls","arguments":"{}"}`)
	want := string(buf)
	res, err := d.Dispatch(context.Background(), Request{Point: intercept.ToolBefore, Payload: json.RawMessage(buf)})
	if err != nil {
		t.Fatal(err)
	}
	if &res.Payload[0] != &buf[0] {
		t.Fatal("D11: unchanged raw payload is not the host's own bytes")
	}
	// The host reuses its buffer after Dispatch returned.
	copy(buf, `{"name":"XX","arguments":"{}"}`)
	close(g.release)
	d.Close()
	ev := g.seenEvents()
	if len(ev) != 1 || ev[0] != string(intercept.ToolBefore)+" "+want {
		t.Fatalf("event = %q, want %q", ev, string(intercept.ToolBefore)+" "+want)
	}
}

// D20: a dispatch that races Close either fails with ErrClosed or gets its
// event delivered (or warned as dropped); an event is never lost silently.
func TestCloseRaceNoSilentLossD20(t *testing.T) {
	for range 50 {
		obs := &fake{}
		w := &warnings{}
		d, err := New([]Contribution{contrib("obs", obs, intercept.SessionStart)}, Options{OnWarning: w.add})
		if err != nil {
			t.Fatal(err)
		}
		const n = 8
		var ok sync.WaitGroup
		var mu sync.Mutex
		succeeded := 0
		for range n {
			ok.Add(1)
			go func() {
				defer ok.Done()
				_, err := d.Dispatch(context.Background(), Request{Point: intercept.SessionStart, Payload: &intercept.SessionPayload{Phase: "start"}})
				if err == nil {
					mu.Lock()
					succeeded++
					mu.Unlock()
				}
			}()
		}
		d.Close()
		ok.Wait()
		got := len(obs.seenEvents())
		if got != succeeded && len(w.all()) == 0 {
			t.Fatalf("%d dispatches succeeded, %d events delivered, no warning: events lost silently", succeeded, got)
		}
	}
}
