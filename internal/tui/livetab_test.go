package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/replay/live"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// liveHangGuard bounds the waits on real HTTP; it only fires on a hang.
const liveHangGuard = 60 * time.Second

const liveChain = `outbound:
  - name: inference-parser
  - name: guardrail
    config:
      phrases: ["drop table"]
      status: 451
  - name: audit-log
`

// startLive runs a real abctl serve engine (internal/replay/live) on
// 127.0.0.1 in front of a real upstream, and returns its base URL and
// its chain.
func startLive(t *testing.T) (base, chainPath string, ch *replay.Chain, srv *live.Server) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"part %d\"}}]}\n\n", i)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(up.Close)
	path := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(path, []byte(liveChain), 0o644); err != nil {
		t.Fatal(err)
	}
	cf, err := catalog.ReadChainFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ch, err = replay.LoadChain(context.Background(), path, gateway.Outbound, testFactories())
	if err != nil {
		t.Fatal(err)
	}
	srv, err = live.New(live.Options{Upstream: up.URL, Chain: ch, ChainFile: cf, Factories: testFactories()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln, liveHangGuard); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		ch.Close(context.Background())
	})
	return "http://" + ln.Addr().String(), path, ch, srv
}

func post(t *testing.T, url, body string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func waitLiveScreen(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains([]byte(ansi.Strip(string(b))), []byte(s)) || strings.Contains(string(b), s)
	}, teatest.WithDuration(liveHangGuard), teatest.WithCheckInterval(20*time.Millisecond))
}

// TestLiveTab drives the real program against a real serve: the Live tab
// shows what serve kept before it attached and what finishes after,
// pausing holds new exchanges back with a counter, / filters, s saves the
// selected exchange as a fixture that replays to the trace serve showed,
// with its golden (a replay suite that passes), and enter opens it in the
// Trace tab's stepper.
func TestLiveTab(t *testing.T) {
	base, chainPath, ch, srv := startLive(t)
	post(t, base+"/v1/json", `{"q":"hello"}`)
	srv.Wait() // exchange 1 is in serve's ring before the TUI attaches

	saveDir := t.TempDir()
	opts := testOptions(t)
	opts.Attach, opts.SaveDir, opts.ChainPath = base, saveDir, chainPath
	m := New(opts)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(m.Close)
	waitLiveScreen(t, tm, "/v1/json") // attached, it opens on the Live tab, with the backlog

	post(t, base+"/v1/json", `{"q":"please drop table users"}`)
	waitLiveScreen(t, tm, "guardrail") // exchange 2, denied, arrives live

	tm.Send(k("space"))
	waitLiveScreen(t, tm, "PAUSED")
	post(t, base+"/v1/stream", `{"stream":true}`)
	waitLiveScreen(t, tm, "held:1")
	tm.Send(k("space"))
	waitLiveScreen(t, tm, "/v1/stream")

	tm.Type("/deny")
	tm.Send(k("enter"))
	tm.Send(k("s"))
	// The status bar, once fixture, golden and chain are written: the
	// whole command that tests the saved suite.
	waitLiveScreen(t, tm, "saved; test: abctl replay "+saveDir+" (")
	tm.Send(k("enter"))
	waitLiveScreen(t, tm, "calls") // the Trace tab's stepper
	tm.Send(k("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(liveHangGuard)).(*Model)

	if fm.cat.c == nil {
		t.Error("the catalog did not load beside the Live tab")
	}
	if n := len(fm.lv.rows); n != 3 || len(fm.lv.held) != 0 {
		t.Fatalf("Live tab holds %d rows (%d held), want 3", n, len(fm.lv.held))
	}
	for i, want := range []uint64{1, 2, 3} {
		if fm.lv.rows[i].ID != want {
			t.Errorf("row %d is exchange %d, want %d", i, fm.lv.rows[i].ID, want)
		}
	}
	r := fm.tr.run
	if fm.tab != tabTrace || r == nil || !strings.HasPrefix(r.Fixture, "live #2 POST /v1/json") || r.Outcome.Kind != gateway.OutcomeDeny || r.Outcome.DeniedBy != "guardrail" || len(r.Events) == 0 {
		t.Fatalf("enter did not open the denied exchange in the Trace tab: tab %v run %+v", fm.tab, r)
	}

	saved, _ := filepath.Glob(filepath.Join(saveDir, "*"+fixture.Ext))
	if len(saved) != 1 {
		t.Fatalf("saved fixtures: %v", saved)
	}
	f, err := fixture.ReadFile(saved[0])
	if err != nil {
		t.Fatal(err)
	}
	got := replay.Run(context.Background(), ch.Chain, f, replay.AsRecorded).WithoutDurations()
	if diff := cmp.Diff(trace.WithoutDurations(r.Events), got.Events); diff != "" {
		t.Errorf("the saved fixture replays to another trace (-live +replay):\n%s", diff)
	}
	if got.Outcome.Kind != "deny" || got.Outcome.DeniedBy != "guardrail" {
		t.Errorf("replayed outcome %+v", got.Outcome)
	}
	// With the chain given, s also wrote the golden: the save directory
	// is a replay suite that passes as it is.
	if _, err := os.Stat(replay.GoldenPath(filepath.Join(saveDir, "golden"), saved[0])); err != nil {
		t.Fatalf("s wrote no golden beside the fixture: %v", err)
	}
	// and a copy of the chain, so that `abctl replay DIR` runs it as it is.
	res, err := replay.RunSuite(context.Background(), replay.SuiteOptions{Chain: filepath.Join(saveDir, "chain.yaml"), Fixtures: saveDir,
		Golden: filepath.Join(saveDir, "golden"), Factories: testFactories()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Failed() {
		t.Errorf("replay of the saved suite: %+v", res)
	}
}

// A Live tab that fell behind is cut by serve with overflow: it
// reconnects at once, resuming after the last event it had
// (Last-Event-ID), says how many events it missed, and goes on with the
// exchanges that finish next. The server is a scripted event stream on
// 127.0.0.1, in serve's wire format (docs/live.md).
func TestLiveTabReconnectsAfterOverflow(t *testing.T) {
	resumed := make(chan string, 1)
	sum := func(id int) string {
		return fmt.Sprintf(`{"id":%d,"method":"POST","path":"/v1/after-%d","status":200,"outcome":"allow"}`, id, id)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == live.PathExchanges {
			io.WriteString(w, `{"exchanges":[]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": abkit live events; subscribed\n\n")
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			resumed <- last
			fmt.Fprintf(w, "event: missed\ndata: {\"missed\":4242}\n\nid: 5000\nevent: exchange_finished\ndata: %s\n\n", sum(2))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		fmt.Fprintf(w, "id: 7\nevent: exchange_finished\ndata: %s\n\n", sum(1))
		io.WriteString(w, "event: overflow\ndata: {\"missed\":10,\"error\":\"behind\"}\n\n")
	}))
	t.Cleanup(srv.Close) // after m.Close, which ends the held stream
	opts := testOptions(t)
	opts.Attach = srv.URL
	m := New(opts)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(m.Close)
	select {
	case last := <-resumed:
		if last != "7" {
			t.Fatalf("reconnected with Last-Event-ID %q, want 7", last)
		}
	case <-time.After(liveHangGuard):
		t.Fatal("the Live tab did not reconnect after overflow")
	}
	// One wait: what it reads is consumed, and both may come in one frame.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		s := ansi.Strip(string(b))
		return strings.Contains(s, "4242 events missed") && strings.Contains(s, "/v1/after-2")
	}, teatest.WithDuration(liveHangGuard), teatest.WithCheckInterval(20*time.Millisecond))
}

// While paused the tab keeps only what it will show on resume (the last
// ring's worth) and counts the rest: 163,000 held exchanges once grew
// its memory without limit.
func TestLivePausedHeldBounded(t *testing.T) {
	var l liveTab
	l.togglePause()
	for i := range 100_000 {
		l.add([]live.Summary{{ID: uint64(i + 1), Method: "GET", Path: "/x"}})
	}
	if len(l.held) > 2*live.DefaultRing || len(l.seen) > 4*live.DefaultRing+1 || l.heldN != 100_000 {
		t.Fatalf("held %d, seen %d, counted %d", len(l.held), len(l.seen), l.heldN)
	}
	l.togglePause()
	if len(l.rows) != live.DefaultRing || l.rows[len(l.rows)-1].ID != 100_000 {
		t.Fatalf("after resume: %d rows, last %d", len(l.rows), l.rows[len(l.rows)-1].ID)
	}
}
