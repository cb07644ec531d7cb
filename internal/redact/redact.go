// Package redact removes credentials from text that leaves abkit: reasons,
// details, warnings, errors, trace events and recorded fixtures (D16).
//
// Each credential is replaced by a marker naming what was removed, for
// example "[REDACTED:bearer]" or "[REDACTED:github_token]", so a reader sees
// that something was there and what kind it was. Text with nothing to
// redact costs a few substring scans and no allocation.
//
// Redaction is best effort by pattern: bearer and Basic credentials, the
// well-known key prefixes (sk-, sk-ant-, ghp_ and friends, github_pat_,
// xox?-, AKIA/ASIA, AIza), JWTs, key=value and "key":"value" pairs whose key
// names a secret (api_key, apikey, token, secret, password, …) and passwords
// in URLs.
package redact

import (
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
	"unsafe"
)

// Marker returns the marker that replaces a credential of kind.
func Marker(kind string) string { return "[REDACTED:" + kind + "]" }

type rule struct {
	kind string
	// triggers are substrings (lower case, matched case-insensitively when
	// fold is set) of which one must occur before the regexp runs.
	triggers []string
	fold     bool
	re       *regexp.Regexp
	// keep returns whether a match is a false positive to keep; nil keeps
	// none.
	keep func(match string) bool
}

var rules = []rule{
	{kind: "jwt", triggers: []string{"eyJ"},
		re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`)},
	{kind: "bearer", triggers: []string{"bearer"}, fold: true,
		re: regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{8,}=*`)},
	{kind: "basic", triggers: []string{"basic"}, fold: true,
		re:   regexp.MustCompile(`(?i)\bbasic\s+[A-Za-z0-9+/]{4,}={0,2}`),
		keep: notBasicCredential},
	{kind: "anthropic_key", triggers: []string{"sk-ant-"},
		re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{8,}`)},
	{kind: "openai_key", triggers: []string{"sk-"},
		re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`)},
	{kind: "github_token", triggers: []string{"gh", "github_pat_"},
		re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`)},
	{kind: "slack_token", triggers: []string{"xox"},
		re: regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9\-]{10,}`)},
	{kind: "aws_access_key", triggers: []string{"AKIA", "ASIA"},
		re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{kind: "google_api_key", triggers: []string{"AIza"},
		re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
}

// kvRe matches key=value, key: value and "key":"value" pairs whose key names
// a secret. Group 1 is the key, group 2 the separator, group 3 the value.
// A value starting with '[' is an earlier marker and is left alone.
var kvRe = regexp.MustCompile(`(?i)\b((?:x[_-])?(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|auth[_-]?token|id[_-]?token|client[_-]?secret|secret[_-]?key|secret|token|password|passwd|pwd))("?\s*[=:]\s*"?)([^\s&"',;\[\]{}<>][^\s&"',;{}<>]*)`)

var kvTriggers = []string{"key", "token", "secret", "passw", "pwd"}

// urlUserinfoRe matches scheme://user:password@ in running text.
var urlUserinfoRe = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)([^/\s:@]*):([^/\s@]+)@`)

// String returns s with credentials replaced by markers. It returns s
// itself, without allocating, when nothing needs redacting.
func String(s string) string {
	for i := range rules {
		r := &rules[i]
		if !triggered(s, r.triggers, r.fold) {
			continue
		}
		s = r.re.ReplaceAllStringFunc(s, func(m string) string {
			if r.keep != nil && r.keep(m) {
				return m
			}
			return Marker(r.kind)
		})
	}
	if triggered(s, kvTriggers, true) {
		s = kvRe.ReplaceAllStringFunc(s, func(m string) string {
			sub := kvRe.FindStringSubmatch(m)
			return sub[1] + sub[2] + Marker(strings.ToLower(sub[1]))
		})
	}
	if strings.Contains(s, "://") {
		s = urlUserinfoRe.ReplaceAllString(s, "${1}${2}:"+Marker("password")+"@")
	}
	return s
}

// Bytes is [String] for byte slices. It returns b itself when nothing needs
// redacting, and a new slice otherwise; b is never modified.
func Bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	// A read-only view: String returns its argument unchanged when nothing
	// matches, and otherwise builds a new string.
	view := unsafe.String(unsafe.SliceData(b), len(b))
	out := String(view)
	if len(out) == len(view) && unsafe.StringData(out) == unsafe.StringData(view) {
		return b
	}
	return []byte(out)
}

// sensitiveHeaders are header names (canonical form) whose whole values are
// credentials.
var sensitiveHeaders = map[string]string{
	"Authorization":        "authorization",
	"Proxy-Authorization":  "authorization",
	"Cookie":               "cookie",
	"Set-Cookie":           "cookie",
	"X-Api-Key":            "api_key",
	"Api-Key":              "api_key",
	"X-Goog-Api-Key":       "api_key",
	"X-Auth-Token":         "token",
	"X-Amz-Security-Token": "token",
}

// headerKind returns the marker kind for a header name that carries a
// credential, or "".
func headerKind(name string) string {
	if k, ok := sensitiveHeaders[http.CanonicalHeaderKey(name)]; ok {
		return k
	}
	l := strings.ToLower(name)
	for _, w := range []string{"token", "secret", "api-key", "apikey", "password", "signature"} {
		if strings.Contains(l, w) {
			return "header"
		}
	}
	return ""
}

// Header returns a copy of h in which the values of credential-carrying
// headers (Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key
// and names containing token, secret, api-key, password or signature) are
// replaced by a marker, and every other value is passed through [String].
// h is not modified; a nil h gives nil.
func Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, vals := range h {
		kind := headerKind(name)
		nv := make([]string, len(vals))
		for i, v := range vals {
			if kind != "" {
				nv[i] = Marker(kind)
			} else {
				nv[i] = String(v)
			}
		}
		out[name] = nv
	}
	return out
}

// secretParams are query parameter names (lower case) whose values are
// credentials.
var secretParams = map[string]bool{
	"api_key": true, "apikey": true, "api-key": true, "key": true,
	"token": true, "access_token": true, "refresh_token": true, "id_token": true,
	"auth": true, "password": true, "passwd": true, "secret": true,
	"client_secret": true, "sig": true, "signature": true,
	"x-amz-signature": true, "x-amz-security-token": true, "x-goog-signature": true,
}

// URL returns u with a userinfo password and the values of credential query
// parameters (api_key, key, token, access_token, password, secret,
// signature, …) replaced by markers; the rest of the text is passed through
// [String]. The URL is edited as text, so its other parts stay exactly as
// given, including the order of query parameters.
func URL(u string) string {
	out := u
	if i := strings.Index(out, "?"); i >= 0 {
		base, query := out[:i], out[i+1:]
		frag := ""
		if j := strings.Index(query, "#"); j >= 0 {
			query, frag = query[:j], query[j:]
		}
		parts := strings.Split(query, "&")
		changed := false
		for k, p := range parts {
			name, _, hasValue := strings.Cut(p, "=")
			if hasValue && secretParams[strings.ToLower(name)] {
				parts[k] = name + "=" + Marker(strings.ToLower(name))
				changed = true
			}
		}
		if changed {
			out = base + "?" + strings.Join(parts, "&") + frag
		}
	}
	// A bare URL needs its userinfo handled even without a scheme match in
	// running text.
	return String(out)
}

// notBasicCredential keeps "basic <word>" unless the word decodes as
// base64 to user:password.
func notBasicCredential(m string) bool {
	fields := strings.Fields(m)
	if len(fields) < 2 {
		return true
	}
	dec, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		dec, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(fields[1], "="))
	}
	return err != nil || !strings.Contains(string(dec), ":")
}

// triggered reports whether s contains one of the triggers. With fold, the
// triggers are lower case and compared ASCII case-insensitively.
func triggered(s string, triggers []string, fold bool) bool {
	for _, t := range triggers {
		if fold {
			if containsFold(s, t) {
				return true
			}
		} else if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lower-case ASCII needle,
// ignoring ASCII case, without allocating.
func containsFold(s, needle string) bool {
	n := len(needle)
	if n == 0 {
		return true
	}
	first := needle[0]
	for i := 0; i+n <= len(s); i++ {
		if lower(s[i]) != first {
			continue
		}
		j := 1
		for ; j < n; j++ {
			if lower(s[i+j]) != needle[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
