package redact

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// webAssets are bodies of real kinds of web traffic, written here, that
// name credentials without holding one: read by their content type, none
// may change, byte for byte. mentions says the content-blind Scan does
// change it (the false positive the content type fixes); the Fetch API's
// credentials modes (omit, include, same-origin) are kept by every rule.
var webAssets = []struct {
	name, ct, body string
	mentions       bool
}{
	{"minified js", "application/javascript; charset=utf-8",
		`!function(){function n(t){this.credentials=t.credentials,this.headers=t.headers,this.withCredentials=!0,this.mode=t.mode}` +
			`var r=fetch(u,{credentials:"omit",method:"GET"});x.withCredentials=!0;e.password=t.password;e.token=t.token||null;` +
			`var k=t?key=1:0;o.apiKey=c.apiKey,o.authToken=c.authToken}();`, true},
	{"js object", "text/javascript", `const init = {credentials: "omit", cache: "no-store"};`, false},
	{"css icon classes", "text/css",
		`.fa-cookie:before{content:"\f563"}.fa-user-secret:before{content:"\f21b"}.fa-key:before{content:"\f084"}` +
			`.password-field:focus{outline:0}.token-list:hover{color:#333}`, true},
	{"html with password fields", "text/html; charset=UTF-8",
		`<form action="/login" method="post"><label for="password">Password:</label>` +
			`<input type="password" id="password" name="password" autocomplete="current-password">` +
			`<input type="hidden" name="token_type" value="bearer"><a href="/reset?next=/account">Forgot password?</a></form>` +
			`<script>var auth={credentials:"include"};window.secret_key_hint=null;</script>`, false},
	{"source map", "application/json",
		`{"version":3,"file":"app.min.js","sources":["src/auth.js"],"sourcesContent":["export function login(user, password) {\n  const headers = {\"Authorization\": \"Bearer \" + token};\n  return fetch(url, {credentials: \"include\", headers});\n}\n"],"names":["login","password","credentials"],"mappings":"AAAA,SAASA"}`, true},
	{"source map, no type", "application/octet-stream",
		`)]}'` + "\n" + `{"version":3,"sources":["a.js"],"sourcesContent":["x.password=y.password"],"mappings":"AAAA"}`, true},
	{"svg", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><title>key:lock</title><path id="secret-path" d="M0 0h24v24H0z"/></svg>`, false},
	{"fetch options as JSON", "application/json", `{"credentials":"same-origin","mode":"cors"}`, false},
	{"chat stream mentioning a password", "text/event-stream",
		`data: {"choices":[{"index":0,"delta":{"content":"Enter your password: then press OK"}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{"content":"Set token=abc123def4 in your shell to test"}}]}` + "\n\n", true},
	{"ndjson log", "application/x-ndjson", `{"msg":"auth: cookie refresh","level":"info"}` + "\n" + `{"msg":"password: field left empty","level":"warn"}` + "\n", true},
}

func TestScanBodyLeavesWebAssetsAlone(t *testing.T) {
	for _, tt := range webAssets {
		t.Run(tt.name, func(t *testing.T) {
			if es := ScanBody(tt.ct, []byte(tt.body)); len(es) != 0 {
				t.Errorf("changed %s data:\n%s\nedits %+v", tt.ct, BodyBytes(tt.ct, []byte(tt.body)), es)
			}
			if got := string(BodyBytes(tt.ct, []byte(tt.body))); got != tt.body {
				t.Errorf("not byte for byte:\n got %q\nwant %q", got, tt.body)
			}
			if changed := len(Scan([]byte(tt.body))) > 0; changed != tt.mentions {
				t.Errorf("Scan without a content type changed it: %v, want %v (fix the vector's mentions)", changed, tt.mentions)
			}
		})
	}
}

// Credentials in each format are still found by the format's rules.
var bodySecrets = []struct {
	name, ct, body string
	secrets        []string
}{
	{"form password", "application/x-www-form-urlencoded", `username=bob&password=correct+horse&x=1`, []string{"correct+horse"}},
	{"form token", "application/x-www-form-urlencoded; charset=UTF-8", `grant_type=refresh_token&refresh_token=rt-0123456789&client_secret=cs1`, []string{"rt-0123456789", "cs1"}},
	{"json key", "application/json", `{"config":{"password":"pw1"},"api_key":"k1"}`, []string{"pw1", "k1"}},
	{"json nested in a string", "application/json", `{"arguments":"{\"api_key\":\"abc def\"}"}`, []string{"abc def"}},
	{"url query in json", "application/json", `{"next":"https://h.example/v1/items?api_key=qs123456&page=2"}`, []string{"qs123456"}},
	{"escaped url in json", "application/json", `{"u":"https:\/\/h.example\/v1?key=k-987654"}`, []string{"k-987654"}},
	{"problem+json", "application/problem+json", `{"detail":"bad","access_token":"at-1"}`, []string{"at-1"}},
	{"json that is not json", "application/json", `api_key=zzz123&x=1`, []string{"zzz123"}},
	{"sse json", "text/event-stream", `data: {"api_key":"x1"}` + "\n\n" + `data: {"content":"sk-proj-ABCDEFGHIJKLMNOP1234"}` + "\n\n", []string{"x1", "sk-proj-ABCDEFGHIJKLMNOP1234"}},
	{"sse text line", "text/event-stream", "data: api_key=zzz987\n\ndata: password: hunter2\n\n", []string{"zzz987", "hunter2"}},
	{"sse pretty-printed json", "text/event-stream", "data: {\ndata:   \"client_secret\": \"cs-2\"\ndata: }\n\n", []string{"cs-2"}},
	{"ndjson", "application/x-ndjson", `{"password":"pw2"}` + "\n" + `{"x":1}`, []string{"pw2"}},
	{"js with a key", "application/javascript", `const k="sk-proj-ABCDEFGHIJKLMNOP1234";fetch("https://maps.example/api/js?key=k-123abc&v=3")`, []string{"sk-proj-ABCDEFGHIJKLMNOP1234", "k-123abc"}},
	{"js relative url", "text/javascript", `fetch("/v1/data?access_token=tok0123456789")`, []string{"tok0123456789"}},
	{"html jwt", "text/html", `<meta name="t" content="eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U">`, []string{"dozjgNryP4J3jVmNHl0w5N"}},
	{"css aws key", "text/css", `/* AKIAIOSFODNN7EXAMPLE */`, []string{"AKIAIOSFODNN7EXAMPLE"}},
	{"pem in a source map", "application/json", `{"version":3,"sources":["k.js"],"sourcesContent":["-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n-----END PRIVATE KEY-----"],"mappings":"A"}`, []string{"MIIEvQIBADANBgkq"}},
	{"binary with a token", "application/octet-stream", "\x00\x01ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\xff", []string{"ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}},
}

func TestScanBodyFindsSecretsByFormat(t *testing.T) {
	for _, tt := range bodySecrets {
		t.Run(tt.name, func(t *testing.T) {
			got := string(BodyBytes(tt.ct, []byte(tt.body)))
			for _, s := range tt.secrets {
				if strings.Contains(got, s) {
					t.Errorf("secret %q survived:\n in %q\nout %q", s, tt.body, got)
				}
			}
			if again := string(BodyBytes(tt.ct, []byte(got))); again != got {
				t.Errorf("not idempotent: %q became %q", got, again)
			}
		})
	}
}

// A body of unknown type (or plain text) gets every rule: the whole
// secrets table holds for it.
func TestScanBodyUnknownTypeIsScan(t *testing.T) {
	for _, ct := range []string{"", "text/plain", "application/x-unknown", "not a media type;;"} {
		for _, tt := range secretCases {
			if got, want := string(BodyBytes(ct, []byte(tt.in))), string(Bytes([]byte(tt.in))); got != want {
				t.Errorf("%q, %s: got %q, want %q as Scan", ct, tt.name, got, want)
			}
		}
	}
}

func TestFormatOf(t *testing.T) {
	for ct, want := range map[string]Format{
		"": FormatText, "text/plain": FormatText, "application/json; charset=utf-8": FormatJSON,
		"Application/JSON": FormatJSON, "application/vnd.api+json": FormatJSON, "text/event-stream": FormatJSON,
		"application/x-ndjson": FormatJSON, "application/x-www-form-urlencoded": FormatForm,
		"text/css": FormatCode, "application/javascript": FormatCode, "text/html;charset=UTF-8": FormatCode,
		"image/png": FormatCode, "font/woff2": FormatCode, "multipart/form-data; boundary=x": FormatText,
	} {
		if got := FormatOf(ct); got != want {
			t.Errorf("FormatOf(%q) = %d, want %d", ct, got, want)
		}
	}
}

// bodyPlants are a secret's templates for each content type: where the
// type's rules must find it.
var bodyPlants = []struct{ ct, tmpl string }{
	{"application/x-www-form-urlencoded", `api_key=%s&x=1`},
	{"application/x-www-form-urlencoded", `user=a&password=%s`},
	{"application/json", `{"password":"%s"}`},
	{"application/json", `{"args":"{\"client_secret\":\"%s\"}"}`},
	{"application/json", `{"u":"https://h.example/v1?api_key=%s&v=1"}`},
	{"text/event-stream", `data: {"sessionToken":["%s"]}`},
	{"text/event-stream", `data: api_key=%s`},
	{"application/javascript", `fetch("https://h.example/x?access_token=%s&v=1")`},
	{"text/html", `<a href="/p?api_key=%s">x</a>`},
	{"", `'password': '%s'`},
}

// FuzzScanBody plants a secret in random bytes in each content type's
// template, with a line break either side, and checks the type's rules
// never let it survive.
func FuzzScanBody(f *testing.F) {
	f.Add([]byte("data: {\"x\":1}\n"), []byte("correct-horse"), []byte("\x00\xff"), uint8(0))
	f.Add([]byte(`{"token":"I'm"}`), []byte(`a"b,c[d`), []byte(`}`), uint8(4))
	f.Add([]byte("this.credentials=t.credentials"), []byte("zz9"), []byte(".fa-cookie:before{"), uint8(7))
	f.Fuzz(func(t *testing.T, pre, secret, post []byte, form uint8) {
		secret = bytes.Map(func(r rune) rune {
			switch r {
			case '"', '\'', '\\', '\n', '\r', '&', '@', '/', '#', ' ', '\t', '[', ']', '?', '%', '<', '>', '=', ';', ',', ')', '}':
				return 'x'
			}
			if r < 0x20 || r == 0x7f {
				return 'x'
			}
			return r
		}, secret)
		if len(secret) < 3 || bytes.Contains([]byte("[REDACTED:"), secret) || bytes.Contains(secret, []byte("REDACTED")) ||
			bytes.Contains(pre, secret) || bytes.Contains(post, secret) {
			return
		}
		p := bodyPlants[int(form)%len(bodyPlants)]
		in := append(append(append(append(append([]byte{}, pre...), '\n'), strings.Replace(p.tmpl, "%s", string(secret), 1)...), '\n'), post...)
		if out := BodyBytes(p.ct, in); bytes.Contains(out, secret) {
			t.Fatalf("secret %q survived as %s in\n in %q\nout %q", secret, p.ct, in, out)
		}
	})
}

// TestJSONPairsAsValidateFirst: jsonPairs, which validates doc only when
// the pairsAll mode finds a pair, makes the edits of validating first
// (pairsURL on JSON, pairsAll on the rest), on random lines and bodies
// of JSON, URLs, key=value and key: value pairs, valid JSON or not.
func TestJSONPairsAsValidateFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	parts := []string{`{"a":`, `}`, `[`, `]`, `"`, `,`, ` `, "\n", `:`, `=`, `&`, `?`, `data: `,
		`"url":"https://h.example/p?token=`, `?api_key=`, `&access_token=`, `password: `, `token=`, `secret=`,
		`"token":"`, `AbCdEf0123456789xYz`, `hunter2`, `http://x/`, `\"`, `true`, `12`}
	n := 0
	for range 50000 {
		var b []byte
		for range 1 + rng.IntN(12) {
			b = append(b, parts[rng.IntN(len(parts))]...)
		}
		for _, doc := range [][]byte{b, bytes.TrimSpace(bytes.TrimPrefix(b, []byte("data:"))), nil} {
			prior := []Edit{{Start: 0, End: 0, Kind: "prior"}}
			got := jsonPairs(b, slices.Clone(prior), doc)
			mode := pairsAll
			if json.Valid(doc) {
				mode = pairsURL
			}
			want := barePairs(b, slices.Clone(prior), mode)
			if !slices.Equal(got, want) {
				t.Fatalf("jsonPairs(%q, doc %q) = %v, want %v", b, doc, got, want)
			}
			if len(want) > 1 {
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no text had a pair: the test tests nothing")
	}
}

// jsonLinesRef is jsonLines as it was before mayHoldPair: the pair rules
// on every line.
func jsonLinesRef(b []byte, es []Edit) []Edit {
	for start := 0; start < len(b); {
		end := bytes.IndexByte(b[start:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += start + 1
		}
		line := b[start:end]
		n := len(es)
		es = quotedPairs(line, es)
		t := bytes.TrimSpace(bytes.TrimPrefix(line, []byte("data:")))
		if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
			t = nil
		}
		es = jsonPairs(line, es, t)
		for i := n; i < len(es); i++ {
			es[i].Start += start
			es[i].End += start
		}
		start = end
	}
	return es
}

// jsonLinesParts are the pieces the jsonLines tests build streams of:
// key words in every case and place (in keys, quoted or bare, in values
// after the last separator, in escaped keys), separators, quotes, line
// breaks and values that look like credentials or not.
var jsonLinesParts = []string{`data: `, `data:`, `{"`, `"`, `'`, `\"`, `:`, `=`, ` : `, "\t", `,`, `}`, `[`, `]`, "\n", "\r\n", "\n\n", `&`, `?`,
	`token`, `TOKEN`, `Api_Key`, `secret`, `pass`, `pwd`, `auth`, `cookie`, `credential`, `sig`, `ke`, `y`, `to`, `ken`,
	`content`, `choices`, `index`, `https://h.example/p?`, `api_key=`, `password: `, `"token":"`, `"access_token": "`,
	`AbCdEf0123456789xYz`, `hunter2`, `I'm`, `12`, `true`, `null`, `"tokens":[`, `\\`}

// TestJSONLinesAsEveryLine: jsonLines, which skips the lines mayHoldPair
// rules out, makes exactly the edits of running the pair rules on every
// line, for random streams of key words, separators and values.
func TestJSONLinesAsEveryLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	n := 0
	for range 100000 {
		var b []byte
		for range 1 + rng.IntN(16) {
			b = append(b, jsonLinesParts[rng.IntN(len(jsonLinesParts))]...)
		}
		prior := []Edit{{Start: 0, End: 0, Kind: "prior"}}
		got, want := jsonLines(b, slices.Clone(prior)), jsonLinesRef(b, slices.Clone(prior))
		if !slices.Equal(got, want) {
			t.Fatalf("jsonLines(%q) = %v, want %v", b, got, want)
		}
		if len(want) > 1 {
			n++
		}
	}
	if n < 1000 {
		t.Fatalf("only %d streams had a pair: the test tests too little", n)
	}
}

// FuzzJSONLines holds jsonLines to the pair rules on every line for any
// bytes.
func FuzzJSONLines(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token 1 of the answer\"}}]}\n\n"))
	f.Add([]byte("data: {\"token\":\"abc\", \"x\": 1}\n\ndata: api_key=zz9\n"))
	f.Add([]byte("\"Secret\" \t: 'v'\n\\\"pwd\\\": \\\"x\\\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, want := jsonLines(b, nil), jsonLinesRef(b, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("jsonLines(%q) = %v, want %v", b, got, want)
		}
	})
}
