// Package redact is abkit's one redaction engine: it removes credentials,
// and only credentials, from everything abkit prints or stores ([D16]):
// recorded and imported fixtures, dry-run traces, warnings, errors,
// conformance reports and printed URLs.
//
// A credential is found by where it sits and by what it looks like, as
// secret scanners do (see Scan): credential headers, query and form
// parameters and JSON keys that name a credential, URL user-info and
// token-shaped path segments, and values with the shape of a credential
// anywhere (JWTs, sk-…, ghp_…, AWS key ids, PEM private keys). Ordinary
// data is never changed: a bare "token" key whose value is text (an
// OpenAI logprobs token, a tokenizer piece) is data.
//
// Each credential is replaced by a marker naming what was removed, for
// example "[REDACTED:bearer]" or "[REDACTED:api_key]"; the marker holds
// no quote or backslash, so JSON stays valid. Text with nothing to redact
// costs a few scans and no allocation. The rules are listed in
// docs/redaction.md.
//
// [D16]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package redact

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unsafe"
)

// Marker returns the marker that replaces a credential of kind.
func Marker(kind string) string { return "[REDACTED:" + kind + "]" }

// String returns s with credentials replaced by markers. It returns s
// itself, without allocating, when nothing needs redacting.
func String(s string) string {
	if s == "" {
		return s
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	es := Scan(b)
	if len(es) == 0 {
		return s
	}
	return string(Apply(b, es))
}

// Bytes is [String] for byte slices of any content, text or not. It
// returns b itself when nothing needs redacting and a new slice otherwise;
// b is never modified.
func Bytes(b []byte) []byte {
	return Apply(b, Scan(b))
}

// Header returns a copy of h in which the values of credential headers
// are replaced by a marker and every other value is passed through
// [String]. Credential headers are Authorization, Proxy-Authorization,
// X-Authorization, Cookie, Set-Cookie, X-Api-Key, Api-Key and every name
// with one of the words token, secret, password, apikey, authorization,
// cookie, credential or signature, or the pairs api-key, access-key,
// subscription-key (Ocp-Apim-Subscription-Key), private-key, secret-key,
// application-key, app-key, auth-key, session-key. Whole words, so
// X-Ratelimit-Remaining-Tokens (a count) is kept. h is not modified; a nil
// h gives nil.
func Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, vals := range h {
		kind := headerKind(name)
		nv := make([]string, len(vals))
		for i, v := range vals {
			if kind != "" && v != "" {
				nv[i] = Marker(kind)
			} else {
				nv[i] = String(v)
			}
		}
		out[name] = nv
	}
	return out
}

// URL returns u with credentials replaced by markers: the password in the
// user-info (and a token used as the user name), the values of query
// parameters whose name, percent-decoded, names a credential (api_key,
// api%5Fkey, key, token, access_token, sig, X-Amz-Signature, …), path
// segments with the shape of a token (/bot123:TOKEN/) and credential-shaped
// values anywhere. The URL is edited as text, so its other parts stay
// exactly as given.
func URL(u string) string {
	return String(u)
}

// Query redacts a query string or an application/x-www-form-urlencoded
// body (without the leading '?'): the value of every parameter whose name,
// percent-decoded, names a credential, and credential-shaped values
// anywhere.
func Query(q string) string {
	return String("?" + q)[1:]
}

// Describe sums up edits for a fixture note: each kind once with the byte
// offsets where it was found (in the original text), at most ten offsets
// in all. It never quotes the credentials themselves.
func Describe(es []Edit) string {
	if len(es) == 0 {
		return ""
	}
	var kinds []string
	at := map[string][]string{}
	shown := 0
	for _, e := range es {
		if _, ok := at[e.Kind]; !ok {
			kinds = append(kinds, e.Kind)
			at[e.Kind] = nil
		}
		if shown < 10 {
			at[e.Kind] = append(at[e.Kind], fmt.Sprint(e.Start))
			shown++
		}
	}
	var b strings.Builder
	for i, k := range kinds {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		if offs := at[k]; len(offs) > 0 {
			b.WriteString(" at byte " + strings.Join(offs, ","))
		}
	}
	if len(es) > shown {
		fmt.Fprintf(&b, " (%d in all)", len(es))
	}
	return b.String()
}

// notBasicCredential keeps "basic <word>" unless the word decodes as
// base64 to user:password.
func notBasicCredential(m []byte) bool {
	fields := strings.Fields(string(m))
	if len(fields) < 2 {
		return true
	}
	dec, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		dec, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(fields[1], "="))
	}
	return err != nil || !strings.Contains(string(dec), ":")
}

// notBearerCredential keeps "bearer <word>" in prose ("the bearer
// responsibility"): a bearer credential has a digit or punctuation in it,
// or is 16 characters or more.
func notBearerCredential(m []byte) bool {
	fields := strings.Fields(string(m))
	if len(fields) < 2 {
		return true
	}
	v := fields[1]
	return len(v) < 16 && !strings.ContainsAny(v, "0123456789-._~+/=")
}

// PathSegment redacts one URL path segment or file-name part derived from
// one, for names built from request paths.
func PathSegment(seg string) string {
	if d, err := url.PathUnescape(seg); err == nil && d != seg {
		if String("/"+d) != "/"+d {
			return String("/" + d)[1:]
		}
	}
	return String("/" + seg)[1:]
}
