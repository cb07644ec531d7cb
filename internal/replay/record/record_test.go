package record_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/replay/record"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/google/go-cmp/cmp"
)

// The proxy relays each SSE event before the upstream sends the next: the
// upstream waits for the test to see event 1 before sending event 2. The
// fixture written afterwards replays to the same trace as the live bytes,
// and carries no credential (P19, D16).
func TestRecordSlowStream(t *testing.T) {
	seen := make(chan struct{})
	events := []string{
		`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n",
		`data: {"choices":[{"index":0,"delta":{"content":"lo"}}]}` + "\n\n",
		"data: [DONE]\n\n",
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			t.Error("upstream did not get the client's Authorization")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Set-Cookie", "session=sk-FAKEfakeFAKEfakeFAKE0009")
		w.WriteHeader(200)
		for i, e := range events {
			w.Write([]byte(e))
			w.(http.Flusher).Flush()
			if i == 0 {
				select {
				case <-seen:
				case <-time.After(5 * time.Second):
					t.Error("client did not see the first event before the upstream went on")
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer up.Close()
	dir := t.TempDir()
	p, err := record.New(up.URL, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(p)
	defer proxy.Close()

	req, _ := http.NewRequest("POST", proxy.URL+"/v1/chat/completions?api_key=querysecret123", strings.NewReader(`{"stream":true}`))
	req.Header.Set("Authorization", "Bearer sk-FAKEfakeFAKEfakeFAKE0001")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	var live strings.Builder
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "Hel") {
		t.Fatalf("first line %q, %v", line, err)
	}
	live.WriteString(line)
	close(seen)
	for {
		l, err := br.ReadString('\n')
		live.WriteString(l)
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	if live.String() != strings.Join(events, "") {
		t.Fatalf("client got %q", live.String())
	}
	var files []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if files = p.Written(); len(files) == 1 {
			break
		}
	}
	if len(files) != 1 {
		t.Fatalf("written %v", files)
	}
	raw, _ := os.ReadFile(files[0])
	for _, s := range []string{"sk-FAKEfakeFAKEfakeFAKE0001", "sk-FAKEfakeFAKEfakeFAKE0009", "querysecret123"} {
		if strings.Contains(string(raw), s) {
			t.Errorf("secret %q in fixture:\n%s", s, raw)
		}
	}
	f, err := fixture.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Response.Chunks) < 3 || f.Response.Chunks[len(f.Response.Chunks)-1].At < 20*time.Millisecond {
		t.Errorf("chunks/timing not kept: %+v", f.Response.Chunks)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("dir holds %d entries, want 1 (no temporary files)", len(ents))
	}

	// Replaying the fixture gives the same trace as the live bytes.
	c, err := pipeline.Build(pipeline.Spec{Direction: gateway.Outbound, Entries: []pipeline.Entry{
		{Plugin: "inference-parser"}, {Plugin: "guardrail", Config: []byte(`{"phrases":["nope"]}`)}}},
		[]gateway.Factory{inferenceparser.Factory(), guardrail.Factory()}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := replay.Run(context.Background(), c, f, replay.AsRecorded).WithoutDurations()
	liveF := *f
	liveF.Response.Chunks = fixture.SplitEvents([]byte(live.String()))
	want := replay.Run(context.Background(), c, &liveF, replay.AsRecorded).WithoutDurations()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("replay differs from live (-live +fixture):\n%s", d)
	}
	if got.Outcome.Frames != 3 {
		t.Errorf("frames %d, want 3", got.Outcome.Frames)
	}
}

// An exchange cut off before it finishes (client gone) is not written.
func TestRecordUnfinishedNotWritten(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: 1\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer up.Close()
	defer close(release)
	dir := t.TempDir()
	p, _ := record.New(up.URL, dir, nil)
	proxy := httptest.NewServer(p)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", proxy.URL+"/s", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(resp.Body).ReadString('\n')
	cancel()
	resp.Body.Close()
	proxy.CloseClientConnections()
	proxy.Close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("unfinished exchange left %v", ents)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

// A token in the URL path (Telegram's /bot<token>/method) is forwarded to
// the upstream and kept out of the fixture, its file name and the log.
func TestRecordPathTokenRedacted(t *testing.T) {
	var gotPath string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true,"result":{"username":"b"}}`))
	}))
	defer up.Close()
	dir := t.TempDir()
	var logs bytes.Buffer
	p, err := record.New(up.URL, dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(p)
	defer proxy.Close()
	resp, err := http.Get(proxy.URL + "/bot123456:PATHSECRETtoken/getMe")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	p.Wait()
	if gotPath != "/bot123456:PATHSECRETtoken/getMe" {
		t.Errorf("upstream got %q, want the token forwarded", gotPath)
	}
	written := p.Written()
	if len(written) != 1 {
		t.Fatalf("written %v", written)
	}
	data, err := os.ReadFile(written[0])
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"file name": written[0], "fixture": string(data), "log": logs.String()} {
		if strings.Contains(s, "PATHSECRET") {
			t.Errorf("token reached the %s: %s", what, s)
		}
	}
	if !strings.Contains(string(data), "bot[REDACTED:bot_token]/getMe") || !strings.Contains(string(data), "note redacted: request URL") {
		t.Errorf("fixture lacks the marker or the note:\n%s", data)
	}
}

// An upstream that fails mid-stream reaches the client as a broken
// stream, as it would straight from the upstream, and nothing is
// recorded.
func TestRecordUpstreamBreakIsBrokenStream(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"n\":1}\n\ndata: {\"cut")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer up.Close()
	dir := t.TempDir()
	p, err := record.New(up.URL, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(p)
	defer proxy.Close()
	resp, err := http.Get(proxy.URL + "/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatalf("the client saw a clean end after %q", body)
	}
	if !strings.Contains(string(body), `{"n":1}`) {
		t.Errorf("what was relayed before the break is missing: %q", body)
	}
	p.Wait()
	if len(p.Written()) != 0 {
		t.Errorf("a broken exchange was recorded: %v", p.Written())
	}
}

// Exchanges the recorder fails to write (its directory gone: a full disk
// fails the same way) are counted, so abctl record exits non-zero rather
// than report only the ones it wrote.
func TestRecordCountsLostExchanges(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true}`)
	}))
	defer up.Close()
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := record.New(up.URL, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(p)
	defer proxy.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		resp, err := http.Get(proxy.URL + "/v1/json")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	p.Wait()
	if p.Lost() != 3 || len(p.Written()) != 0 {
		t.Fatalf("lost %d, written %v; want 3 lost", p.Lost(), p.Written())
	}
}
