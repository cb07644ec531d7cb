package live

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// secretTraffic is one exchange of every kind that carries credentials:
// in the Authorization header, the query, the request body, the upstream's
// JSON answer and stream, a token-shaped path segment, a denied request,
// and a request body whose credential straddles a small body cap.
var secretTraffic = []struct {
	method, path, body string
}{
	{http.MethodPost, "/v1/json?secret&api_key=q" + secretMark + "query123", `{"api_key":"b` + secretMark + `body","q":"hi"}`},
	{http.MethodPost, "/v1/stream?secret&n=2", `{"stream":true,"password":"p` + secretMark + `pass"}`},
	{http.MethodGet, "/v1/bot123456789:AAH" + secretMark + "tokenvalue/getMe", ""},
	{http.MethodPost, "/v1/json", `{"q":"drop table users","password":"p` + secretMark + `denied"}`},
	{http.MethodPost, "/v1/json", `{"pad":"` + strings.Repeat("x", 40) + `","api_key":"plain` + secretMark + `straddling-the-cap-value"}`},
}

// TestNoSecretServed: the ring keeps exchanges as they arrived (memory
// only) and redacts them when they are read, so every way out is checked:
// the event stream, the list, every detail, every fixture, the plugin and
// pipeline endpoints, the --record files and the log. None may hold a
// credential, with the default body cap (exchanges kept whole, redacted
// on read) and with a cap smaller than a body (redacted whole, then cut,
// so a credential across the cut is not half kept).
func TestNoSecretServed(t *testing.T) {
	up := newUpstream(t)
	for _, c := range []struct {
		name    string
		bodyCap int
		record  bool
	}{{"whole", 0, true}, {"capped", 64, false}} {
		t.Run(c.name, func(t *testing.T) {
			var logs lockedBuffer
			opts := Options{BodyCap: c.bodyCap, Log: slog.New(slog.NewTextHandler(&logs, nil))}
			if c.record {
				opts.RecordDir = t.TempDir()
			}
			s := startServe(t, up.URL, testChain, opts, hangGuard)
			events := subscribe(t, s.base)
			var served strings.Builder // everything the API answered
			for _, x := range secretTraffic {
				req, _ := http.NewRequest(x.method, s.base+x.path, strings.NewReader(x.body))
				req.Header.Set("Authorization", "Bearer sk-proj-"+secretMark+"0123456789")
				req.Header.Set("X-Api-Key", "h"+secretMark+"header")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			s.Wait()
			for finished := 0; finished < len(secretTraffic); {
				ev, err := readEvent(events)
				if err != nil {
					t.Fatalf("event stream: %v", err)
				}
				fmt.Fprintf(&served, "%s %s\n", ev.name, ev.data)
				if ev.name == "exchange_finished" {
					finished++
				}
			}

			read := func(path string) int {
				resp, err := client.Get(s.base + path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				fmt.Fprintf(&served, "%s %v %s\n", path, resp.Header, body)
				return resp.StatusCode
			}
			read(PathPlugins)
			read(PathPipeline)
			read(PathExchanges)
			fixtures := 0
			for id := 1; id <= len(secretTraffic); id++ {
				if code := read(fmt.Sprintf("%s/%d", PathExchanges, id)); code != http.StatusOK {
					t.Errorf("detail of exchange %d: %d", id, code)
				}
				if read(fmt.Sprintf("%s/%d/fixture", PathExchanges, id)) == http.StatusOK {
					fixtures++
				}
			}
			if fixtures == 0 {
				t.Error("no exchange was served as a fixture: the fixture path was not checked")
			}
			if opts.RecordDir != "" {
				if got := len(fixturesIn(t, opts.RecordDir)); got != len(secretTraffic) {
					t.Errorf("%d fixtures recorded, want %d", got, len(secretTraffic))
				}
				ents, _ := os.ReadDir(opts.RecordDir)
				for _, e := range ents {
					data, _ := os.ReadFile(filepath.Join(opts.RecordDir, e.Name()))
					fmt.Fprintf(&served, "%s %s\n", e.Name(), data)
				}
			}
			served.WriteString(logs.String())
			if n := strings.Count(served.String(), secretMark); n > 0 {
				sc := bufio.NewScanner(strings.NewReader(served.String()))
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					if strings.Contains(sc.Text(), secretMark) {
						t.Errorf("a credential was served: %.300s", sc.Text())
					}
				}
			}

			// The test means something only if the ring held credentials:
			// whole exchanges are kept as they arrived and redacted on
			// read; a body over the cap is redacted before it is cut.
			for id := uint64(1); id <= uint64(len(secretTraffic)); id++ {
				ex, ok := s.ring.get(id)
				if !ok {
					t.Fatalf("exchange %d not in the ring", id)
				}
				overCap := c.bodyCap > 0 && max(ex.sizes.request, ex.sizes.response) > c.bodyCap
				switch {
				case overCap && (ex.raw != nil || ex.redacted == nil):
					t.Errorf("exchange %d (a body over the cap): raw %t, redacted %t; want it redacted at once", id, ex.raw != nil, ex.redacted != nil)
				case overCap && id == 5 && !ex.truncated:
					t.Errorf("exchange %d: request body of %d bytes not cut at the cap of %d", id, ex.sizes.request, c.bodyCap)
				case !overCap && ex.raw == nil:
					t.Errorf("exchange %d: not kept as it arrived (redacted %t): redaction is not lazy", id, ex.redacted != nil)
				case !overCap && !strings.Contains(fmt.Sprintf("%s %v %s", ex.raw.url, ex.raw.reqHeader, ex.raw.reqBody), secretMark):
					t.Errorf("exchange %d: the ring's copy holds no credential; the test checks nothing", id)
				}
			}
		})
	}
}

// lockedBuffer is a log sink for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
