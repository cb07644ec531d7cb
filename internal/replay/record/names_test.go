package record

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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
	for range 2 {
		p, err := New(up.URL, dir, slog.New(slog.NewTextHandler(tlog{t}, nil)))
		if err != nil {
			t.Fatal(err)
		}
		p.now = func() time.Time { return frozen }
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
	waitFiles(t, dir, 2*each)
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
	waitFiles(t, dir, 1)
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if d != nil && !d.IsDir() && (filepath.Dir(path) != dir || len(d.Name()) > 160) {
			t.Errorf("%s: not a short name directly in the output directory", path)
		}
		return nil
	})
}

// waitFiles waits for n fixture files: the fixture is written after the
// client's response ends.
func waitFiles(t *testing.T, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // hang guard only
	for {
		m, _ := filepath.Glob(filepath.Join(dir, "*"+fixture.Ext))
		if len(m) >= n || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type tlog struct{ t *testing.T }

func (l tlog) Write(b []byte) (int, error) { l.t.Log(strings.TrimSpace(string(b))); return len(b), nil }
