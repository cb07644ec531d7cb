package redact

import (
	"net/http"
	"strings"
	"testing"
)

// D16: table of credentials that must never survive redaction.
func TestStringD16(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text untouched", "tool rm blocked by policy", "tool rm blocked by policy"},
		{"bearer", "Authorization: Bearer abcdef0123456789.xyz", "Authorization: [REDACTED:bearer]"},
		{"bearer lower case", "got bearer abcdefghijklmnop", "got [REDACTED:bearer]"},
		{"basic", "Authorization: Basic dXNlcjpodW50ZXIy", "Authorization: [REDACTED:basic]"},
		{"basic prose kept", "basic authentication failed", "basic authentication failed"},
		{"openai", "key sk-proj-ABCDEFGHIJKLMNOP1234 rejected", "key [REDACTED:openai_key] rejected"},
		{"anthropic", "sk-ant-api03-abcdefghijklmnop", "[REDACTED:anthropic_key]"},
		{"github classic", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "[REDACTED:github_token]"},
		{"github fine grained", "github_pat_11ABCDEFG0123456789_abcdefghijkl", "[REDACTED:github_token]"},
		{"slack", "xoxb-1234567890-abcdefghij", "[REDACTED:slack_token]"},
		{"aws", "id AKIAIOSFODNN7EXAMPLE used", "id [REDACTED:aws_access_key] used"},
		{"google", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED:google_api_key]"},
		{"jwt", "tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
			"tok [REDACTED:jwt] end"},
		{"api_key=", "call failed: api_key=abc123&x=1", "call failed: api_key=[REDACTED:api_key]&x=1"},
		{"apikey:", "apikey: abc123", "apikey: [REDACTED:apikey]"},
		{"token=", "token=s3cr3tvalue", "token=[REDACTED:token]"},
		{"password json", `{"password":"hunter2","user":"bob"}`, `{"password":"[REDACTED:password]","user":"bob"}`},
		{"url password", "dial https://bob:hunter2@example.com/x failed", "dial https://bob:[REDACTED:password]@example.com/x failed"},
		{"prefix inside kv", "token=sk-ABCDEFGHIJKLMNOPQRST", "token=[REDACTED:openai_key]"},
		{"short sk- kept", "task-list and sk-1", "task-list and sk-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if got := string(Bytes([]byte(tt.in))); got != tt.want {
				t.Errorf("Bytes(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestStringNoMatchNoAlloc(t *testing.T) {
	s := "extension policy-1 blocked tool.before: rm is disabled in this workspace"
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Errorf("String on clean text allocated %v times, want 0", n)
	}
	b := []byte(s)
	if got := Bytes(b); &got[0] != &b[0] {
		t.Error("Bytes on clean text returned a copy, want the same slice")
	}
}

func TestHeaderD16(t *testing.T) {
	h := http.Header{
		"Authorization": {"Bearer abcdefghijklmnop"},
		"Cookie":        {"session=abc"},
		"Set-Cookie":    {"id=1; HttpOnly"},
		"X-Api-Key":     {"k-123"},
		"X-My-Token":    {"t"},
		"Content-Type":  {"application/json"},
		"X-Note":        {"used sk-ABCDEFGHIJKLMNOPQRST"},
	}
	got := Header(h)
	want := map[string]string{
		"Authorization": "[REDACTED:authorization]",
		"Cookie":        "[REDACTED:cookie]",
		"Set-Cookie":    "[REDACTED:cookie]",
		"X-Api-Key":     "[REDACTED:api_key]",
		"X-My-Token":    "[REDACTED:token]",
		"Content-Type":  "application/json",
		"X-Note":        "used [REDACTED:openai_key]",
	}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Get(k), v)
		}
	}
	if h.Get("Authorization") != "Bearer abcdefghijklmnop" {
		t.Error("Header modified its input")
	}
	if Header(nil) != nil {
		t.Error("Header(nil) != nil")
	}
}

func TestURLD16(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://api.example.com/v1/models", "https://api.example.com/v1/models"},
		{"https://api.example.com/v1?key=AIzaXX&alt=json", "https://api.example.com/v1?key=[REDACTED:key]&alt=json"},
		{"https://x.io/p?a=1&api_key=abc&token=t#frag", "https://x.io/p?a=1&api_key=[REDACTED:api_key]&token=[REDACTED:token]#frag"},
		{"https://bob:hunter2@example.com/", "https://bob:[REDACTED:password]@example.com/"},
		{"postgres://u:p%40ss@db:5432/x?sslmode=disable", "postgres://u:[REDACTED:password]@db:5432/x?sslmode=disable"},
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func BenchmarkStringClean(b *testing.B) {
	s := strings.Repeat("extension blocked the call at tool.before ", 4)
	b.ReportAllocs()
	for b.Loop() {
		_ = String(s)
	}
}

func TestBearerProseKept(t *testing.T) {
	if got := String("bearer of bad news"); got != "bearer of bad news" {
		t.Errorf("got %q", got)
	}
}

// BenchmarkURLClean: a URL without credentials, as every recorded
// exchange has one.
func BenchmarkURLClean(b *testing.B) {
	u := "http://127.0.0.1:8089/v1/chat/completions?model=gpt-4o&stream=true&id=42"
	b.ReportAllocs()
	for b.Loop() {
		_ = URL(u)
	}
}
