package live

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/google/go-cmp/cmp"
)

// TestStreamRelayedFrameByFrame: the client reads each SSE frame while the
// upstream still holds the next one; the relay never waits for the end of
// the stream. Each read would hang (until the hang guard) if serve
// buffered.
func TestStreamRelayedFrameByFrame(t *testing.T) {
	up := newUpstream(t)
	s := startServe(t, up.URL, testChain, Options{}, hangGuard)
	resp, err := client.Post(s.base+"/v1/gated", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	r := bufio.NewReader(resp.Body)
	want := []string{"first", "next 1", "next 2", "next 3"}
	for i, text := range want {
		ev, err := readEvent(r)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !strings.Contains(ev.data, text) {
			t.Fatalf("frame %d: %q, want %q", i, ev.data, text)
		}
		if i < len(want)-1 {
			up.gate <- struct{}{} // the upstream sends the next frame only now
		}
	}
	if rest, _ := io.ReadAll(r); len(rest) != 0 {
		t.Errorf("after the last frame: %q", rest)
	}
}

// TestConcurrentClients: 40 clients × 25 exchanges, JSON and SSE mixed,
// all through serve at once: every client gets its whole answer, the
// server counts every exchange once, ids are unique, and the ring keeps
// exactly its size, newest last.
func TestConcurrentClients(t *testing.T) {
	up := newUpstream(t)
	const clients, each, ringSize = 40, 25, 100
	s := startServe(t, up.URL, testChain, Options{Ring: ringSize}, hangGuard)
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				path, want := "/v1/json", `"ok":true`
				if (c+i)%2 == 0 {
					path, want = fmt.Sprintf("/v1/stream?n=%d", 1+i%5), fmt.Sprintf("part %d", i%5)
				}
				resp, err := client.Post(s.base+path, "application/json", strings.NewReader(fmt.Sprintf(`{"client":%d,"i":%d}`, c, i)))
				if err != nil {
					errs <- err
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), want) {
					errs <- fmt.Errorf("client %d exchange %d %s: %d %v %q", c, i, path, resp.StatusCode, err, body)
				}
			}
		})
	}
	wg.Wait()
	s.Wait() // a client has its answer before the exchange's OnFinish calls end
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var list exchangeList
	get(t, s.base+PathExchanges, &list)
	if list.Served != clients*each {
		t.Errorf("served %d, want %d", list.Served, clients*each)
	}
	if len(list.Exchanges) != ringSize || list.Ring != ringSize {
		t.Fatalf("ring holds %d of size %d, want %d", len(list.Exchanges), list.Ring, ringSize)
	}
	seen := map[uint64]bool{}
	for _, e := range list.Exchanges {
		if seen[e.ID] || e.ID < 1 || e.ID > clients*each {
			t.Errorf("exchange id %d duplicated or out of range", e.ID)
		}
		seen[e.ID] = true
		if e.Outcome != "allow" || e.Status != 200 {
			t.Errorf("exchange %d: %s %d", e.ID, e.Outcome, e.Status)
		}
	}
	if st := s.Stats(); st.Served != clients*each || st.Cut != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestSavedFixtureReplaysSameTrace: an exchange taken from the API as a
// fixture, and the file --record wrote for it, replay through the same
// chain to the trace serve showed, for a stream, a JSON body and a denied
// stream (a frame rejected mid-stream).
func TestSavedFixtureReplaysSameTrace(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	s := startServe(t, up.URL, testChain, Options{RecordDir: dir}, hangGuard)
	cases := []struct {
		path, body, outcome string
	}{
		{"/v1/stream?n=4", `{"stream":true}`, "allow"},
		{"/v1/json", `{"q":"hello"}`, "allow"},
		{"/v1/json", `{"q":"please drop table users"}`, "deny"},
	}
	for i, c := range cases {
		resp, err := client.Post(s.base+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		s.Wait()
		id := uint64(i + 1)
		var d exchangeDetail
		if code := get(t, fmt.Sprintf("%s%s/%d", s.base, PathExchanges, id), &d); code != 200 {
			t.Fatalf("exchange %d: status %d", id, code)
		}
		if d.Exchange.Outcome != c.outcome || !d.Fixture {
			t.Fatalf("exchange %d (%s): outcome %s, fixture %t (%s)", id, c.path, d.Exchange.Outcome, d.Fixture, d.NoFixture)
		}
		fresp, err := client.Get(fmt.Sprintf("%s%s/%d/fixture", s.base, PathExchanges, id))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(fresp.Body)
		fresp.Body.Close()
		if fresp.StatusCode != 200 {
			t.Fatalf("fixture of exchange %d: %d %s", id, fresp.StatusCode, data)
		}
		f, err := fixture.Parse("api", data)
		if err != nil {
			t.Fatalf("fixture of exchange %d: %v", id, err)
		}
		got := replay.Run(context.Background(), s.chain.Chain, f, replay.AsRecorded).WithoutDurations()
		want := d.Trace.WithoutDurations()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("exchange %d (%s): replayed trace differs from the live one (-live +replay):\n%s", id, c.path, diff)
		}
	}
	s.stop() // waits for the fixture writes
	files := fixturesIn(t, dir)
	if len(files) != len(cases) {
		t.Fatalf("--record wrote %d files, want %d", len(files), len(cases))
	}
	for _, name := range files {
		f, err := fixture.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if f.Source != "abctl serve --upstream "+up.URL {
			t.Errorf("%s: source %q", name, f.Source)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(cases) {
		t.Errorf("record dir holds %d entries, want %d (no temporary files)", len(entries), len(cases))
	}
}

// TestShutdownLetsInFlightFinish: a stream in flight when the stop comes
// finishes within the grace period: the client gets every frame, the
// exchange is not cut.
func TestShutdownLetsInFlightFinish(t *testing.T) {
	up := newUpstream(t)
	s := startServe(t, up.URL, testChain, Options{}, hangGuard)
	events := subscribe(t, s.base)
	resp, err := client.Post(s.base+"/v1/gated", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if ev, err := readEvent(r); err != nil || !strings.Contains(ev.data, "first") {
		t.Fatalf("first frame: %+v %v", ev, err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	// The event stream ends with "shutdown" once the stop has begun.
	for {
		ev, err := readEvent(events)
		if err != nil {
			t.Fatalf("event stream ended without a shutdown event: %v", err)
		}
		if ev.name == "shutdown" {
			break
		}
	}
	for range 3 {
		up.gate <- struct{}{}
	}
	rest, err := io.ReadAll(r)
	if err != nil || !strings.Contains(string(rest), "next 3") {
		t.Fatalf("after the stop began the client got %q, %v; want the rest of the stream", rest, err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Served != 1 || st.Cut != 0 {
		t.Errorf("stats %+v, want 1 served, none cut", st)
	}
}

// TestShutdownCutsAfterGrace: a stream still in flight when the grace
// period ends is cut: Serve returns, the exchange is marked cut and its
// outcome names the shutdown, and no fixture is written for it.
func TestShutdownCutsAfterGrace(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	s := startServe(t, up.URL, testChain, Options{RecordDir: dir}, 1) // 1ns: cut at once
	resp, err := client.Post(s.base+"/v1/gated", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if ev, err := readEvent(r); err != nil || !strings.Contains(ev.data, "first") {
		t.Fatalf("first frame: %+v %v", ev, err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r) // ends: the connection was closed
	ex, ok := s.ring.get(1)
	if !ok {
		t.Fatal("the cut exchange is not in the ring")
	}
	if !ex.Cut || ex.Outcome != "error" || !strings.Contains(ex.Reason, "shutdown grace period") {
		t.Errorf("cut exchange: cut=%t outcome=%s reason=%q", ex.Cut, ex.Outcome, ex.Reason)
	}
	if _, _, why := ex.view(DefaultBodyCap); why == "" {
		t.Error("a cut exchange is offered as a fixture")
	}
	if st := s.Stats(); st.Cut != 1 || st.Recorded != 0 {
		t.Errorf("stats %+v, want 1 cut, 0 recorded", st)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("record dir holds %d entries after a cut exchange, want none", len(entries))
	}
}

// TestUpstreamDown: an upstream that does not answer is a 502 for the
// client, an error outcome in the ring, and no fixture.
func TestUpstreamDown(t *testing.T) {
	up := newUpstream(t)
	url := up.URL
	up.Close()
	s := startServe(t, url, testChain, Options{}, hangGuard)
	resp, err := client.Get(s.base + "/v1/json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s.Wait()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
	var d exchangeDetail
	if code := get(t, s.base+PathExchanges+"/1", &d); code != 200 {
		var list exchangeList
		get(t, s.base+PathExchanges, &list)
		t.Fatalf("detail: %d; list %+v", code, list)
	}
	if d.Exchange.Outcome != "error" || d.Fixture || d.Upstream != nil {
		t.Errorf("detail: %+v", d)
	}
	if code := get(t, s.base+PathExchanges+"/1/fixture", nil); code != http.StatusConflict {
		t.Errorf("fixture of a failed exchange: %d, want 409", code)
	}
}

// TestRecordQueueBounded: with --record, at most the queue's size of
// fixtures wait to be written; the next exchange waits for a place before
// its handler returns (its stream does not end), and goes on, recorded,
// once the writer moves.
func TestRecordQueueBounded(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	gate := make(chan struct{})
	s := startServe(t, up.URL, testChain, Options{RecordDir: dir, queue: 1, writeGate: func() { <-gate }}, hangGuard)
	var release sync.Once
	open := func() { release.Do(func() { close(gate) }) }
	t.Cleanup(open) // before serve stops: a failed test must not leave the writer held
	resp, err := client.Post(s.base+"/v1/json", "application/json", strings.NewReader(`{"q":"first"}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	done := make(chan error, 1)
	go func() {
		resp, err := client.Post(s.base+"/v1/stream?n=1", "application/json", strings.NewReader(`{"q":"second"}`))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	for deadline := time.Now().Add(hangGuard); s.queueFull.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second exchange never found the queue full")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the stream ended (%v) while its fixture had no place in the queue", err)
	default:
	}
	if st := s.Stats(); st.Served != 2 || st.Recorded != 0 {
		t.Errorf("stats while the writer is held: %+v, want 2 served, none recorded", st)
	}
	open()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("the stream did not end after the writer moved")
	}
	s.Wait()
	if st := s.Stats(); st.Recorded != 2 || len(fixturesIn(t, dir)) != 2 {
		t.Errorf("stats %+v, files %v; want 2 recorded", st, fixturesIn(t, dir))
	}
}

// brokenUpstream sends one SSE frame (or, for JSON, half a body of a
// longer Content-Length) and then drops the connection.
func brokenUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/json" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, `{"half":`)
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, frame("before the break"))
			io.WriteString(w, `data: {"cut`)
		}
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	t.Cleanup(up.Close)
	return up
}

// An upstream that fails mid-stream reaches the client as a broken
// stream, not as a clean end with half a frame relayed; the exchange is
// still kept with an error outcome. A failed buffered body is a 502.
func TestServeUpstreamBreakIsBrokenStream(t *testing.T) {
	up := brokenUpstream(t)
	s := startServe(t, up.URL, testChain, Options{}, time.Second)
	resp, err := client.Get(s.base + "/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatalf("the client saw a clean end after %q", body)
	}
	if !strings.Contains(string(body), "before the break") {
		t.Errorf("what was relayed before the break is missing: %q", body)
	}
	var list struct{ Exchanges []Summary }
	deadline := time.Now().Add(hangGuard)
	for len(list.Exchanges) == 0 && time.Now().Before(deadline) {
		get(t, s.base+PathExchanges, &list)
	}
	if len(list.Exchanges) != 1 || list.Exchanges[0].Outcome != "error" {
		t.Fatalf("exchanges %+v, want one with outcome error", list.Exchanges)
	}

	resp, err = client.Get(s.base + "/v1/json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("a JSON body cut by the upstream: status %d, want 502", resp.StatusCode)
	}
}

// TestStreamWritesCoalesced: a 200-event answer the upstream writes in a
// few buffered writes reaches the client whole in a few writes to its
// connection, not one write per event (each write is a write(2)).
func TestStreamWritesCoalesced(t *testing.T) {
	up := sseUpstream(t)
	srv, err := New(passOptions(t, up.URL, 6, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	base := serveOn(t, srv, func(ln net.Listener) net.Listener { return countingListener{ln, &writes} })
	resp, err := client.Post(base+"/v1/chat", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := bytes.Count(body, []byte("data: ")); err != nil || n != sseEvents {
		t.Fatalf("status %d, %d event(s) of %d, %v", resp.StatusCode, n, sseEvents, err)
	}
	// The upstream's 4 KiB buffer cuts the ~17 KB answer into about 5
	// writes; serve flushes once per read of it. A flush per event would
	// be over 200.
	if n := writes.Load(); n > 30 {
		t.Errorf("%d writes to the client for %d events, want O(upstream reads)", n, sseEvents)
	}
}
