package cli

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFixtureImportSSENotText: an --sse body that is not UTF-8 text is
// refused with exit 3, an error naming the file and the first bad byte's
// offset and pointing at --json or --har, and no fixture written. Text
// bodies still import.
func TestFixtureImportSSENotText(t *testing.T) {
	random := make([]byte, 4096)
	rand.Read(random)
	random[0] = 0xff // never the start of a UTF-8 sequence: offset 0 for sure
	tests := []struct {
		name string
		body []byte
		code int
		want []string // on stderr
	}{
		{"random", random, ExitRead, []string{"byte offset 0:", "invalid UTF-8 byte 0xff"}},
		{"nul", []byte("data: {}\n\n\x00"), ExitRead, []string{"byte offset 10:", "NUL byte 0x00"}},
		{"control", []byte("data: \x07\n\n"), ExitRead, []string{"byte offset 6:", "control byte 0x07"}},
		{"text", []byte("data: {\"é\":1}\r\n\r\n\tdata: x\n\n"), 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "body.sse"), filepath.Join(dir, "x.fixture")
			if err := os.WriteFile(in, tc.body, 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runAbctl(t, "fixture", "import", "--sse", in, "--out", out)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.code, stderr)
			}
			_, statErr := os.Stat(out)
			if tc.code == 0 {
				if statErr != nil || strings.TrimSpace(stdout) != out {
					t.Fatalf("text body not imported: %v; stdout %q", statErr, stdout)
				}
				return
			}
			if !os.IsNotExist(statErr) {
				t.Errorf("fixture written for a refused body (stat: %v)", statErr)
			}
			if stdout != "" {
				t.Errorf("stdout on error: %q", stdout)
			}
			for _, w := range append(tc.want, "--sse "+in+":", "use --json or --har for other bodies") {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

func harWith(method, url, started string) string {
	return `{"log":{"entries":[
 {"startedDateTime":"2024-05-01T10:00:00Z","request":{"method":"GET","url":"https://api.example.com/v1/models"},"response":{"status":200,"content":{"mimeType":"application/json","text":"{}"}}},
 {"startedDateTime":` + strconvQuote(started) + `,"request":{"method":` + strconvQuote(method) + `,"url":` + strconvQuote(url) + `},"response":{"status":200,"content":{"mimeType":"application/json","text":"{}"}}}]}}`
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A HAR entry whose method or date could not make a fixture is skipped
// with a warning naming it and why, and nothing is written for it, inside
// --out or anywhere else; the good entry is imported. A method or URL path
// made of traversal, NUL or long runs only ever yields a sanitised name
// inside --out.
func TestFixtureImportHARHostile(t *testing.T) {
	for _, tc := range []struct {
		name, method, url, started string
		files                      int // fixtures written: the bad entry is skipped
		want                       string
	}{
		{"traversal method", "/../../../../tmp/x/PWNED", "https://a.example/v1", "2024-05-01T10:00:00Z", 1, `request method "/../../../../tmp/x/PWNED": want an HTTP token`},
		{"NUL method", "GET\x00", "https://a.example/v1", "2024-05-01T10:00:00Z", 1, `want an HTTP token`},
		{"300-byte method", strings.Repeat("P", 300), "https://a.example/v1", "2024-05-01T10:00:00Z", 1, "want an HTTP token of at most 32 bytes"},
		{"year 10000", "GET", "https://a.example/v1", "9999-12-31T23:00:00-05:00", 1, "is in year 10000 (UTC); want a date in years 1-9999; skipped"},
		{"year 0", "GET", "https://a.example/v1", "0000-01-01T00:00:00Z", 1, "year 0"},
		{"traversal path", "GET", "https://a.example/../../../../tmp/" + strings.Repeat("x/", 200) + "PWNED", "2024-05-01T10:00:00Z", 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			out := filepath.Join(root, "a", "b", "out")
			in := filepath.Join(root, "in.har")
			os.WriteFile(in, []byte(harWith(tc.method, tc.url, tc.started)), 0o644)
			code, _, stderr := runAbctl(t, "fixture", "import", "--har", in, "--out", out)
			if code != 0 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want 0; stderr %q, want %q", code, stderr, tc.want)
			}
			var files []string
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if d != nil && !d.IsDir() && p != in {
					files = append(files, p)
				}
				return nil
			})
			if len(files) != tc.files {
				t.Fatalf("files %v, want %d", files, tc.files)
			}
			for _, f := range files {
				if filepath.Dir(f) != out || len(filepath.Base(f)) > 100 {
					t.Errorf("%s: not a short name directly in --out", f)
				}
			}
		})
	}
}

// An import never replaces an earlier file: a name taken in --out fails
// the whole import before anything is written.
func TestFixtureImportHARNoOverwrite(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.har")
	os.WriteFile(in, []byte(harWith("POST", "https://a.example/v1/chat", "2024-05-01T10:00:00Z")), 0o644)
	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	taken := filepath.Join(out, "002-post-v1-chat.fixture")
	os.WriteFile(taken, []byte("mine"), 0o644)
	code, _, stderr := runAbctl(t, "fixture", "import", "--har", in, "--out", out)
	if code != ExitRead || !strings.Contains(stderr, "already exists") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(taken); string(b) != "mine" {
		t.Fatalf("existing file replaced")
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Fatalf("out holds %d files, want the 1 that was there", len(ents))
	}
}

// TestFixtureImportJSONEmptyBody: an empty --json body is a real exchange
// with status 202 (an MCP notification's reply) or 204, or as a HEAD
// answer; with a status that needs a body it is a usage error naming the
// file and the statuses that allow none.
func TestFixtureImportJSONEmptyBody(t *testing.T) {
	tests := []struct {
		name, status, request string
		code                  int
		wantStatus            int
	}{
		{"202", "202", "POST https://mcp.example/mcp\nContent-Type: application/json\n\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 0, 202},
		{"204 by default", "", "", 0, 204},
		{"head", "", "HEAD https://api.example/v1/models\n\n", 0, 200},
		{"200 refused", "200", "", ExitUsage, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "body.json"), filepath.Join(dir, "x.fixture")
			if err := os.WriteFile(in, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"fixture", "import", "--json", in, "--out", out}
			if tc.status != "" {
				args = append(args, "--status", tc.status)
			}
			if tc.request != "" {
				req := filepath.Join(dir, "req.http")
				if err := os.WriteFile(req, []byte(tc.request), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--request", req)
			}
			code, _, stderr := runAbctl(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.code, stderr)
			}
			if tc.code != 0 {
				if !strings.Contains(stderr, "--json "+in+":") || !strings.Contains(stderr, "202, 204 or 304") {
					t.Errorf("stderr %q: want the file and the statuses that allow an empty body", stderr)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("fixture written (stat: %v)", err)
				}
				return
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := "response " + strconv.Itoa(tc.wantStatus); !strings.Contains(string(data), want+"\n") {
				t.Errorf("fixture lacks %q:\n%s", want, data)
			}
		})
	}
}
