package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// payload is the data of the events these tests publish: 1 KiB, so a
// burst is larger than the loopback socket buffers.
type payload struct {
	N   int    `json:"n"`
	Pad string `json:"pad"`
}

var pad = strings.Repeat("x", 1000)

func publishN(b *broker, from, n int) {
	for i := range n {
		b.publish("test", payload{N: from + i, Pad: pad})
	}
}

// waitFor polls cond until it holds; the hang guard fails the test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, hangGuard)
		}
		time.Sleep(time.Millisecond)
	}
}

// A subscriber that stops reading for a burst of 20,000 events (20 MiB,
// far past the socket buffers and the 4,096 events it could once fall
// behind) and then reads on gets every event, in order: it is not cut.
func TestEventsPausedReaderCatchesUp(t *testing.T) {
	up := newUpstream(t)
	s := startServe(t, up.URL, testChain, Options{}, time.Second)
	r := subscribe(t, s.base)
	const n = 20000
	publishN(s.events, 0, n) // the reader reads nothing meanwhile
	for i := range n {
		ev, err := readEvent(r)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.name != "test" {
			t.Fatalf("event %d: %q %s, want test", i, ev.name, ev.data)
		}
		var p payload
		if err := json.Unmarshal([]byte(ev.data), &p); err != nil || p.N != i {
			t.Fatalf("event %d: %s (%v)", i, ev.data[:min(len(ev.data), 40)], err)
		}
	}
}

// A subscriber that never reads is cut once a write to it stalls for
// EventWriteTimeout, and costs no memory of its own meanwhile: the log
// all subscribers share is bounded, and it is let go when the last one
// leaves.
func TestEventsStalledReaderCut(t *testing.T) {
	up := newUpstream(t)
	s := startServe(t, up.URL, testChain, Options{EventWriteTimeout: 20 * time.Millisecond}, time.Second)
	c, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(hangGuard))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", PathEvents)
	waitFor(t, "subscribed", s.events.active)
	// Publish until the server gives up on the client: far more than any
	// socket buffer holds, and never more than the log's bound.
	for i := 0; s.events.active(); i += 1000 {
		if i > 1_000_000 {
			t.Fatal("a client that reads nothing is still subscribed after 1 GB of events")
		}
		publishN(s.events, i, 1000)
		s.events.mu.Lock()
		held := s.events.bytes
		s.events.mu.Unlock()
		if held > EventLogBytes {
			t.Fatalf("the event log holds %d bytes, over its bound %d", held, EventLogBytes)
		}
	}
	s.events.mu.Lock()
	if s.events.log != nil || s.events.bytes != 0 {
		t.Errorf("the log was kept after the last subscriber left: %d bytes", s.events.bytes)
	}
	s.events.mu.Unlock()
	// The server closed the connection: what is in the buffers, then EOF.
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("the cut subscriber's connection is still open: %v", err)
	}
}

// A subscriber that reads, but falls behind by more than the log holds,
// is cut with overflow saying how many it missed; reconnecting with
// Last-Event-ID it is told how many it missed and gets the rest.
func TestEventsOverflowAndResume(t *testing.T) {
	up := newUpstream(t)
	s := startServe(t, up.URL, testChain, Options{}, time.Second)
	s.events = newBrokerSized(100, 1<<30) // before anyone subscribes
	r := subscribe(t, s.base)
	publishN(s.events, 0, 5000) // while the reader reads nothing
	var last string
	for {
		ev, err := readEvent(r)
		if err != nil {
			t.Fatalf("the stream ended without overflow: %v", err)
		}
		if ev.name == "overflow" {
			var o struct {
				Missed int    `json:"missed"`
				Error  string `json:"error"`
			}
			if err := json.Unmarshal([]byte(ev.data), &o); err != nil || o.Missed <= 0 || !strings.Contains(o.Error, "Last-Event-ID") {
				t.Fatalf("overflow data %s (%v)", ev.data, err)
			}
			break
		}
		last = ev.id
	}
	if _, err := readEvent(r); err != io.EOF && err != io.ErrUnexpectedEOF {
		t.Fatalf("after overflow: %v, want the end of the stream", err)
	}
	if last == "" {
		last = "1"
	}

	// Resume: a subscriber is there again before more is published.
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+PathEvents, nil)
	req.Header.Set("Last-Event-ID", last)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r2 := bufio.NewReader(resp.Body)
	if ev, err := readEvent(r2); err != nil || ev.name != "comment" {
		t.Fatalf("first block %+v %v", ev, err)
	}
	ev, err := readEvent(r2)
	if err != nil || ev.name != "missed" {
		t.Fatalf("first event after a resume: %+v %v, want missed", ev, err)
	}
	// Nothing is published while nobody listens: the last id is where
	// the first subscriber left.
	s.events.mu.Lock()
	seq := int(s.events.seq)
	s.events.mu.Unlock()
	var m struct{ Missed int }
	lastN, _ := strconv.Atoi(last)
	if json.Unmarshal([]byte(ev.data), &m) != nil || m.Missed != seq-lastN {
		t.Fatalf("missed %s, want %d (the log was let go when the last subscriber left)", ev.data, seq-lastN)
	}
	publishN(s.events, seq, 1)
	ev, err = readEvent(r2)
	if err != nil || ev.id != strconv.Itoa(seq+1) {
		t.Fatalf("after the resume: %+v %v, want event %d", ev, err, seq+1)
	}
}
