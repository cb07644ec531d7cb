package record

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/replay/fixture"
)

// Two recorders on one --out whose clocks read the same second (two
// processes, or a restart) lose no exchange: every exchange is its own
// file, none overwritten.
func TestTwoRecordersOneDir(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"n":"` + r.URL.Query().Get("n") + `"}`))
	}))
	defer up.Close()
	dir := t.TempDir()
	frozen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var proxies []*httptest.Server
	var recorders []*Proxy
	for range 2 {
		p, err := New(up.URL, dir, slog.New(slog.NewTextHandler(tlog{t}, nil)))
		if err != nil {
			t.Fatal(err)
		}
		p.now = func() time.Time { return frozen }
		recorders = append(recorders, p)
		s := httptest.NewServer(p)
		defer s.Close()
		proxies = append(proxies, s)
	}
	const each = 10
	for i := range each {
		for j, s := range proxies {
			resp, err := http.Get(s.URL + "/v1/models?n=" + string(rune('a'+j)) + string(rune('a'+i)))
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	}
	for _, p := range recorders {
		p.Wait() // fixtures are written after each response
	}
	seen := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		f, err := fixture.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		seen[f.Request.URL] = true
	}
	if len(ents) != 2*each || len(seen) != 2*each {
		t.Fatalf("%d files, %d distinct exchanges; want %d of each", len(ents), len(seen), 2*each)
	}
}

// A hostile method or path names a file directly inside the output
// directory, never outside it.
func TestRecordHostileNames(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer up.Close()
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	os.Mkdir(dir, 0o755)
	p, err := New(up.URL, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(p)
	defer s.Close()
	req, _ := http.NewRequest("GET", s.URL+"/..%2F..%2F"+strings.Repeat("x%2F", 100)+"PWNED", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	p.Wait()
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if d != nil && !d.IsDir() && (filepath.Dir(path) != dir || len(d.Name()) > 160) {
			t.Errorf("%s: not a short name directly in the output directory", path)
		}
		return nil
	})
}

type tlog struct{ t *testing.T }

func (l tlog) Write(b []byte) (int, error) { l.t.Log(strings.TrimSpace(string(b))); return len(b), nil }

// The path goes upstream byte for byte: an escaped slash stays %2F, and
// odd but valid escapes are not normalised.
func TestRecordForwardsPathExactly(t *testing.T) {
	got := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.RequestURI
		w.Write([]byte("ok"))
	}))
	defer up.Close()
	p, err := New(up.URL+"/base", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(p)
	defer s.Close()
	resp, err := http.Get(s.URL + "/v1/models/org%2Fname/x%7e?q=a%2Fb&r=%20")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if u := <-got; u != "/base/v1/models/org%2Fname/x%7e?q=a%2Fb&r=%20" {
		t.Errorf("upstream saw %q", u)
	}
	p.Wait()
}

// The client's response ends when the upstream's does: it does not wait
// for the fixture to be written (held here until the client has it all).
func TestRecordResponseEndsBeforeFixture(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: one\n\n"))
		w.(http.Flusher).Flush()
		w.Write([]byte("data: two\n\n"))
	}))
	defer up.Close()
	dir := t.TempDir()
	p, err := New(up.URL, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	p.writeGate = func() { <-release }
	s := httptest.NewServer(p)
	defer s.Close()
	resp, err := http.Get(s.URL + "/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	body := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(resp.Body) // returns at the end of the response
		resp.Body.Close()
		body <- string(b)
	}()
	select {
	case b := <-body:
		if b != "data: one\n\ndata: two\n\n" {
			t.Errorf("body %q", b)
		}
	case <-time.After(20 * time.Second): // hang guard: the fixture write is held
		close(release)
		t.Fatal("the response did not end while the fixture write was held")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.fixture")); len(m) != 0 {
		t.Fatalf("fixture written before the gate opened: %v", m)
	}
	close(release)
	p.Wait()
	if m, _ := filepath.Glob(filepath.Join(dir, "*.fixture")); len(m) != 1 {
		t.Fatalf("fixtures %v, want 1 after the write", m)
	}
}

// Bodies held for recording across concurrent exchanges stay within the
// proxy's memory budget: past it they go to a temporary file, and every
// fixture still holds its whole body, byte for byte; no temporary file is
// left.
func TestRecordBoundedMemory(t *testing.T) {
	const body = 1 << 20
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		b := []byte(strings.Repeat(r.URL.Query().Get("c"), body/4))
		for range 4 {
			w.Write(b)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	dir := t.TempDir()
	p, err := New(up.URL, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.memory = 512 << 10 // half of one body
	s := httptest.NewServer(p)
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(s.URL + "/blob?c=" + string(rune('a'+i)))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	p.Wait()
	if m := p.maxHeld.Load(); m > p.memory {
		t.Errorf("held %d bytes in memory, over the budget of %d", m, p.memory)
	}
	if p.spilled.Load() == 0 {
		t.Error("no body spilled: the test does not exercise the budget")
	}
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
			continue
		}
		f, err := fixture.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b := f.Response.BodyBytes()
		if len(b) != body || strings.Trim(string(b), string(b[0])) != "" {
			t.Errorf("%s: body of %d bytes, not the %d sent", e.Name(), len(b), body)
		}
		n++
	}
	if n != 6 {
		t.Errorf("%d fixtures, want 6", n)
	}
}

// TestRecordClientClosesAtOnce: a client that has the whole of a
// response of known length and closes its connection at once (which
// cancels the request's context) still gets its exchange recorded. The
// proxy used to check the context after relaying and drop such exchanges
// without a word (TestRecordLoadNothingLost lost one in a few hundred).
func TestRecordClientClosesAtOnce(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer up.Close()
	dir := t.TempDir()
	p, err := New(up.URL, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.afterRelay = func(r *http.Request) {
		select {
		case <-r.Context().Done(): // the client has closed its connection
		case <-time.After(30 * time.Second): // hang guard only
			t.Error("the client's close never reached the proxy")
		}
	}
	s := httptest.NewServer(p)
	defer s.Close()
	c := &http.Client{Transport: &http.Transport{}}
	resp, err := c.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != `{"ok":true}` {
		t.Fatalf("body %q, %v", body, err)
	}
	c.CloseIdleConnections()
	p.Wait()
	if got := p.Written(); len(got) != 1 {
		t.Fatalf("%d fixtures written, want 1", len(got))
	}
}

// TestRecordBoundedMemoryRequests: request bodies count against the same
// budget as responses and spill past it; the upstream still gets each
// body whole, with its length, and each fixture holds it exactly.
func TestRecordBoundedMemoryRequests(t *testing.T) {
	const body = 1 << 20
	var bad atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c := r.URL.Query().Get("c")
		if r.ContentLength != body || len(b) != body || strings.Trim(string(b), c) != "" {
			bad.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer up.Close()
	dir := t.TempDir()
	p, err := New(up.URL, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.memory = 512 << 10 // half of one body
	s := httptest.NewServer(p)
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := string(rune('a' + i))
			resp, err := http.Post(s.URL+"/upload?c="+c, "application/octet-stream", strings.NewReader(strings.Repeat(c, body)))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	p.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("upstream got %d request bodies wrong", n)
	}
	if m := p.maxHeld.Load(); m > p.memory {
		t.Errorf("held %d bytes in memory, over the budget of %d", m, p.memory)
	}
	if p.spilled.Load() == 0 {
		t.Error("no request body spilled: the test does not exercise the budget")
	}
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
			continue
		}
		f, err := fixture.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b := f.Request.Body
		if len(b) != body || strings.Trim(string(b), string(b[0])) != "" {
			t.Errorf("%s: request body of %d bytes, not the %d sent", e.Name(), len(b), body)
		}
		n++
	}
	if n != 6 {
		t.Errorf("%d fixtures, want 6", n)
	}
}

// TestRecordBatchSync: fixtures written while a sync runs share the next
// one (one sync for the batch, not one each), no fixture is named before
// a sync that started after its file was written, and a failed sync
// names nothing and says so.
func TestRecordBatchSync(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer up.Close()
	get := func(base string, i int) {
		t.Helper()
		resp, err := http.Get(base + "/v1/x?n=" + strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	t.Run("batched", func(t *testing.T) {
		dir := t.TempDir()
		p, err := New(up.URL, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		var rounds atomic.Int64
		started, release := make(chan struct{}), make(chan struct{})
		p.syncs.sync = func(string) error {
			if rounds.Add(1) == 1 {
				close(started)
				<-release // hold the first round
			}
			return nil
		}
		s := httptest.NewServer(p)
		defer s.Close()
		get(s.URL, 0)
		<-started
		const more = 20
		for i := range more {
			get(s.URL, i+1) // answered while the sync is held
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) { // hang guard
			p.qmu.Lock()
			n := len(p.nameq)
			p.qmu.Unlock()
			if n == more {
				break
			}
			if time.Now().After(deadline) {
				close(release)
				t.Fatalf("%d of %d fixtures written while the sync was held", n, more)
			}
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "*.fixture")); len(m) != 0 {
			t.Errorf("named before their sync finished: %v", m)
		}
		close(release)
		p.Wait()
		if m, _ := filepath.Glob(filepath.Join(dir, "*.fixture")); len(m) != more+1 {
			t.Errorf("%d fixtures, want %d", len(m), more+1)
		}
		if n := rounds.Load(); n != 2 {
			t.Errorf("%d sync rounds, want 2 (the first exchange's, then one for the %d written meanwhile)", n, more)
		}
	})
	t.Run("failed", func(t *testing.T) {
		dir := t.TempDir()
		logs := &lockedBuffer{}
		p, err := New(up.URL, dir, slog.New(slog.NewTextHandler(logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		p.syncs.sync = func(string) error { return errors.New("disk on fire") }
		s := httptest.NewServer(p)
		defer s.Close()
		get(s.URL, 0)
		p.Wait()
		if ents, _ := os.ReadDir(dir); len(ents) != 0 || len(p.Written()) != 0 {
			t.Errorf("after a failed sync: %d entries, %d written; want none", len(ents), len(p.Written()))
		}
		if !strings.Contains(logs.String(), "exchange not recorded") || !strings.Contains(logs.String(), "disk on fire") {
			t.Errorf("the failed sync is not reported: %q", logs.String())
		}
	})
}

// TestRecordQueueFull: exchanges that finish while the fixture queue is
// full wait for room and are all recorded; clients of responses of known
// length have them whole meanwhile.
func TestRecordQueueFull(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"n":"` + r.URL.Query().Get("n") + `"}`))
	}))
	defer up.Close()
	dir := t.TempDir()
	p, err := New(up.URL, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.queueLen = 2
	release := make(chan struct{})
	p.writeGate = func() { <-release }
	s := httptest.NewServer(p)
	defer s.Close()
	const n = 12 // Writers held in the gate, 2 queued, the rest waiting for room
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{}} // a connection each
			resp, err := c.Get(s.URL + "/v1/x?n=" + strconv.Itoa(i))
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(b), `"`+strconv.Itoa(i)+`"`) {
				t.Errorf("exchange %d: body %q", i, b)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // hang guard
		close(release)
		t.Fatal("clients did not get their responses while the queue was full")
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) { // hang guard
		p.qmu.Lock()
		queued := len(p.queue)
		p.qmu.Unlock()
		if queued == 2 {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("%d exchanges queued, want the queue full (2)", queued)
		}
	}
	close(release)
	p.Wait()
	if m, _ := filepath.Glob(filepath.Join(dir, "*.fixture")); len(m) != n {
		t.Errorf("%d fixtures, want %d", len(m), n)
	}
}
