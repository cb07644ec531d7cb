package redact

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// secretCases holds every form a credential takes in traffic and logs,
// including each leak found against the previous, pattern-only redaction
// (a multi-word value kept its tail, `\"`, `,` or a leading `[` ended the
// match early, prefixed key names were missed, api%5Fkey was missed, one
// NUL switched redaction off, a bot token in the path survived). Every
// listed secret must be gone from the output.
var secretCases = []struct {
	name    string
	in      string
	secrets []string
	// want, when set, is the exact output.
	want string
}{
	{name: "multi-word password", in: `{"password":"correct horse battery staple","user":"bob"}`,
		secrets: []string{"correct", "horse", "battery", "staple"},
		want:    `{"password":"[REDACTED:password]","user":"bob"}`},
	{name: "escaped quote and comma", in: `{"password":"pa\"ss,wo]rd x","n":1}`,
		secrets: []string{`pa\"ss`, "wo]rd"}, want: `{"password":"[REDACTED:password]","n":1}`},
	{name: "value starting with [", in: `{"api_key": "[abc def] ghi"}`, secrets: []string{"abc def", "ghi"},
		want: `{"api_key": "[REDACTED:api_key]"}`},
	{name: "openai_api_key", in: `{"openai_api_key":"not-a-shape-123"}`, secrets: []string{"not-a-shape-123"}},
	{name: "aws_secret_access_key", in: `{"aws_secret_access_key":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`, secrets: []string{"wJalrXUtnFEMI"}},
	{name: "aws_session_token", in: `{"aws_session_token":"FwoGZXIvYXdzEBYaDH"}`, secrets: []string{"FwoGZXIvYXdzEBYaDH"}},
	{name: "private_key", in: `{"private_key":"abc def"}`, secrets: []string{"abc def"}},
	{name: "bot_token", in: `{"bot_token":"123:TOKEN"}`, secrets: []string{"123:TOKEN"}},
	{name: "sessionToken camel", in: `{"sessionToken":"opaque value"}`, secrets: []string{"opaque value"}},
	{name: "client_secret", in: `{"client_secret":"s"}`, secrets: []string{`"s"`}, want: `{"client_secret":"[REDACTED:client_secret]"}`},
	{name: "access refresh id tokens", in: `{"access_token":"at1","refresh_token":"rt2","id_token":"it3"}`, secrets: []string{"at1", "rt2", "it3"}},
	{name: "apiKey camel", in: `{"apiKey":"k1"}`, secrets: []string{"k1"}},
	{name: "x-api-key as JSON key", in: `{"x-api-key":"k2"}`, secrets: []string{"k2"}},
	{name: "X-Amz-Security-Token header line in text", in: "GET / HTTP/1.1\r\nX-Amz-Security-Token: FwoGZXIvYXdzEJr\r\n", secrets: []string{"FwoGZXIvYXdzEJr"}},
	{name: "X-Amz-Security-Token as JSON key", in: `{"X-Amz-Security-Token":"FwoGZXIvYXdzEJr"}`, secrets: []string{"FwoGZXIvYXdzEJr"}},
	{name: "Authorization echoed in JSON", in: `{"headers":{"Authorization":"Token abc"}}`, secrets: []string{"Token abc"}},
	{name: "nested object", in: `{"config":{"db":{"password":"pw1"}}}`, secrets: []string{"pw1"}},
	{name: "list of keys", in: `{"api_keys":["key one","key two"]}`, secrets: []string{"key one", "key two"}},
	{name: "secret key in escaped JSON", in: `{"arguments":"{\"api_key\":\"abc def\",\"q\":\"x\"}"}`, secrets: []string{"abc def"},
		want: `{"arguments":"{\"api_key\":\"[REDACTED:api_key]\",\"q\":\"x\"}"}`},
	{name: "escaped JSON with escaped quote inside", in: `{"a":"{\"password\":\"p\\\"w\"}"}`, secrets: []string{`p\\\"w`}},
	{name: "python repr", in: `error: {'api_key': 'abc123xyz', 'n': 1}`, secrets: []string{"abc123xyz"}},
	{name: "form body", in: `username=bob&password=correct+horse&x=1`, secrets: []string{"correct+horse"},
		want: `username=bob&password=[REDACTED:password]&x=1`},
	{name: "percent-encoded name", in: `https://h.example/v1?api%5Fkey=abc123&x=1`, secrets: []string{"abc123"},
		want: `https://h.example/v1?api%5Fkey=[REDACTED:api_key]&x=1`},
	{name: "query key", in: `https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse&key=k-123`, secrets: []string{"k-123"}},
	{name: "query sig", in: `https://a.blob.core.windows.net/c/b?sv=2020&sig=abc%2Bdef`, secrets: []string{"abc%2Bdef"}},
	{name: "query token", in: `/p?token=t`, secrets: []string{"=t"}},
	{name: "url user:password", in: `dial https://bob:hunter2@example.com/x failed`, secrets: []string{"hunter2"}},
	{name: "url token as user", in: `git clone https://ghx_abcdefghij0123456789@github.com/o/r`, secrets: []string{"ghx_abcdefghij0123456789"}},
	{name: "bot token in path", in: `https://api.telegram.org/bot123:TOKEN/getMe`, secrets: []string{"TOKEN", "123:"},
		want: `https://api.telegram.org/bot[REDACTED:bot_token]/getMe`},
	{name: "telegram token shape", in: `token 110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw seen`, secrets: []string{"AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"}},
	{name: "slack webhook", in: `https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX`, secrets: []string{"XXXXXXXXXXXXXXXX"}},
	{name: "jwt", in: `{"t":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}`, secrets: []string{"dozjgNryP4J3jVmNHl0w5N"}},
	{name: "openai key in text", in: `data: {"content":"use sk-proj-ABCDEFGHIJKLMNOP1234 now"}`, secrets: []string{"sk-proj-ABCDEFGHIJKLMNOP1234"}},
	{name: "github token", in: `ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789`, secrets: []string{"ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}},
	{name: "aws access key", in: `"AccessKeyId": "AKIAIOSFODNN7EXAMPLE"`, secrets: []string{"AKIAIOSFODNN7EXAMPLE"}},
	{name: "pem block", in: "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----\n", secrets: []string{"MIIEowIBAAKCAQEA7", "abc"}},
	{name: "pem in JSON", in: `{"k":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n-----END PRIVATE KEY-----\n"}`, secrets: []string{"MIIEvQIBADANBgkq"}},
	{name: "pem cut short", in: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", secrets: []string{"b3BlbnNzaC1rZXktdjEAAAAA"}},
	{name: "bearer", in: "Authorization: Bearer abcdef0123456789.xyz", secrets: []string{"abcdef0123456789"}},
	{name: "basic", in: "Authorization: Basic dXNlcjpodW50ZXIy", secrets: []string{"dXNlcjpodW50ZXIy"}},
	{name: "log line password", in: "connect: password: correct horse battery staple\nnext", secrets: []string{"correct", "staple"}},
	{name: "stripe", in: `sk_live_ABCDEFGHIJKLMNOPQRSTUVWX`, secrets: []string{"ABCDEFGHIJKLMNOPQRSTUVWX"}},
	{name: "bare token with a credential value", in: `{"token":"a8f5f167f44f4964e6c998dee827110c"}`, secrets: []string{"a8f5f167f44f4964e6c998dee827110c"}},
	{name: "NUL before", in: "\x00\xff\xfe{\"password\":\"hunter2\"}\x00", secrets: []string{"hunter2"}},
	{name: "invalid UTF-8 around key", in: "\xc3\x28 sk-ABCDEFGHIJKLMNOPQRST \xff api_key=zzz123 \x80", secrets: []string{"sk-ABCDEFGHIJKLMNOPQRST", "zzz123"}},
	{name: "unterminated value", in: `{"password":"abc`, secrets: []string{"abc"}},
}

func TestScanFindsEverySecret(t *testing.T) {
	for _, tt := range secretCases {
		t.Run(tt.name, func(t *testing.T) {
			got := string(Bytes([]byte(tt.in)))
			for _, s := range tt.secrets {
				if strings.Contains(got, s) {
					t.Errorf("secret %q survived:\n in %q\nout %q", s, tt.in, got)
				}
			}
			if !strings.Contains(got, "[REDACTED:") {
				t.Errorf("no marker in %q", got)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent: %q became %q", got, again)
			}
		})
	}
}

// noSecretCases are ordinary protocol data that mention credentials'
// names without holding one: none may change.
var noSecretCases = []struct{ name, in string }{
	{"openai logprobs", `data: {"choices":[{"delta":{"content":"I'm"},"logprobs":{"content":[{"token":"I'm","logprob":-0.0012,"bytes":[73,39,109],"top_logprobs":[{"token":"I","logprob":-6.9}]}]}}]}` + "\n\n"},
	{"logprobs token Foo", `{"token":"Foo","logprob":-1.2}`},
	{"logprobs token with spaces", `{"token":" password","logprob":-0.3},{"token":" is","logprob":-0.1}`},
	{"tokenizer output", `{"tokens":["▁the","▁password","▁is"],"token_ids":[278,4800,338],"token":"▁hello","eos_token":"</s>","bos_token":"<s>","pad_token":"<|endoftext|>","unk_token":"<unk>"}`},
	{"usage counts", `{"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17},"max_tokens":100}`},
	{"prose", `{"content":"How do I reset my password? Choose a strong password and keep your API key secret."}`},
	{"prose with token word", `The token limit is 4096 tokens; each token is about four characters.`},
	{"token type", `{"token_type":"Bearer","expires_in":3600}`},
	{"pagination", `{"next_page_token":"","nextPageToken":null}`},
	{"thinking signature", `{"type":"signature_delta","signature":"EqQBCkgIARABGAIiQLOLlnU7vm9BMmBZK3YtO0PLdwHeUbHxUmK9KbNplvQJ0Rk7qI7kVHCh0Y0V7q"}`},
	{"gemini thought signature", `{"thoughtSignature":"CiQB0e2Kb4Xc9JzGvNnZwQ2p8"}`},
	{"generic key", `{"key":"value","key_name":"model","keys":["a","b"]}`},
	{"password policy", `{"password_policy":"at least 8 characters","secret_name":"db"}`},
	{"bearer prose", `the bearer of bad news; Bearer responsibility`},
	{"url without secrets", `https://example.com/docs?page=2&sort=token#password`},
	{"a2a status", `data: {"jsonrpc":"2.0","id":1,"result":{"kind":"status-update","taskId":"t1","status":{"state":"working"},"final":false}}` + "\n\n"},
	{"mcp result", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"token: the word"}]}}`},
	{"key colon prose", `the key: to success is practice`},
	{"chat id", `{"id":"chatcmpl-AB12cd34EF56gh78IJ90kl","object":"chat.completion.chunk"}`},
	{"uuid", `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","request_id":"req_011CN7kyRzkZ5nFtp2DGVhHJ"}`},
	{"already redacted", `{"password":"[REDACTED:password]"}`},
	{"empty password", `{"password":"","api_key":null}`},
}

func TestScanLeavesDataAlone(t *testing.T) {
	for _, tt := range noSecretCases {
		t.Run(tt.name, func(t *testing.T) {
			if es := Scan([]byte(tt.in)); len(es) != 0 {
				t.Errorf("changed ordinary data %q:\n%q\nedits %+v", tt.in, Bytes([]byte(tt.in)), es)
			}
		})
	}
}

func TestHeaderVendorNames(t *testing.T) {
	for _, name := range []string{
		"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "Api-Key",
		"Ocp-Apim-Subscription-Key", "X-Authorization", "X-Access-Key", "X-Goog-Api-Key",
		"X-Amz-Security-Token", "X-Auth-Token", "Private-Token", "X-Vault-Token", "Dd-Api-Key",
		"Dd-Application-Key", "X-Shopify-Access-Token", "Anthropic-Api-Key", "X-Client-Secret",
	} {
		if got := Header(http.Header{name: {"v-secret"}}).Get(name); strings.Contains(got, "v-secret") {
			t.Errorf("header %s kept its value: %q", name, got)
		}
	}
	for _, name := range []string{
		"X-Ratelimit-Remaining-Tokens", "Anthropic-Ratelimit-Input-Tokens-Remaining", "Mcp-Session-Id",
		"Content-Type", "Www-Authenticate", "Openai-Organization", "X-Request-Id",
		"Access-Control-Allow-Credentials", "Access-Control-Allow-Headers", "Access-Control-Expose-Headers",
	} {
		if got := Header(http.Header{name: {"v-1"}}).Get(name); got != "v-1" {
			t.Errorf("header %s changed: %q", name, got)
		}
	}
}

func TestRebound(t *testing.T) {
	// A secret split across three chunks, then one after.
	chunks := []string{`{"api_key":"IT`, `SEC`, `RET1"}` + "\n", `{"password":"p"}`}
	var joined []byte
	var ends []int
	for _, c := range chunks {
		joined = append(joined, c...)
		ends = append(ends, len(joined))
	}
	es := Scan(joined)
	out := Apply(joined, es)
	nb, spanned := Rebound(ends, es)
	if spanned != 2 {
		t.Errorf("spanned = %d, want 2", spanned)
	}
	if nb[len(nb)-1] != len(out) {
		t.Fatalf("last boundary %d, want %d", nb[len(nb)-1], len(out))
	}
	prev := 0
	var parts []string
	for _, e := range nb {
		part := string(out[prev:e])
		for _, s := range []string{"IT", "SEC", "RET1", `"p"`} {
			if strings.Contains(part, s) {
				t.Errorf("chunk %q holds %q", part, s)
			}
		}
		parts = append(parts, part)
		prev = e
	}
	want := []string{`{"api_key":"[REDACTED:api_key]`, ``, `"}` + "\n", `{"password":"[REDACTED:password]"}`}
	for i := range want {
		if parts[i] != want[i] {
			t.Errorf("chunk %d = %q, want %q", i, parts[i], want[i])
		}
	}
}

func TestDescribe(t *testing.T) {
	es := Scan([]byte(`{"password":"a","api_key":"b"} sk-ABCDEFGHIJKLMNOPQRST`))
	got := Describe(es)
	if got != "password at byte 13, api_key at byte 27, openai_key at byte 31" {
		t.Errorf("Describe = %q", got)
	}
}

// plants are the templates a fuzzed secret is planted with; %s is the
// secret.
var plants = []string{
	`{"password":"%s"}`, `{"openai_api_key": "%s"}`, `{"client_secret":"%s","x":1}`,
	`api_key=%s&x=1`, `?api%%5Fkey=%s`, `{"args":"{\"password\":\"%s\"}"}`,
	`https://user:%s@host/`, `{"sessionToken":["%s"]}`, `'password': '%s'`,
}

// FuzzRedactPlanted plants a secret in random traffic, with a line break
// either side, and checks it never survives.
func FuzzRedactPlanted(f *testing.F) {
	f.Add([]byte("data: {\"x\":1}\n"), []byte("correct horse"), []byte("\x00\xff"), uint8(0))
	f.Add([]byte(`{"token":"I'm"}`), []byte(`a"b,c[d`), []byte(`}`), uint8(5))
	f.Add([]byte{}, []byte("zz9"), []byte{}, uint8(6))
	f.Fuzz(func(t *testing.T, pre, secret, post []byte, form uint8) {
		// The secret must be a value its template can carry whole: no
		// quote, backslash, line break or template delimiter, and not a
		// marker's own text.
		secret = bytes.Map(func(r rune) rune {
			switch r {
			case '"', '\'', '\\', '\n', '\r', '&', '@', '/', '#', ' ', '\t', '[', ']', '?', '%':
				return 'x'
			}
			if r < 0x20 || r == 0x7f {
				return 'x'
			}
			return r
		}, secret)
		if len(secret) < 3 || bytes.Contains([]byte("[REDACTED:"), secret) || bytes.Contains(secret, []byte("REDACTED")) {
			return
		}
		tmpl := plants[int(form)%len(plants)]
		planted := []byte(strings.Replace(tmpl, "%s", string(secret), 1))
		planted = bytes.ReplaceAll(planted, []byte("%%"), []byte("%"))
		in := append(append(append(append(append([]byte{}, pre...), '\n'), planted...), '\n'), post...)
		if bytes.Contains(pre, secret) || bytes.Contains(post, secret) {
			return
		}
		out := Bytes(in)
		if bytes.Contains(out, secret) {
			t.Fatalf("secret %q survived in\n in %q\nout %q", secret, in, out)
		}
	})
}
