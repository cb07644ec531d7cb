package redact

import (
	"bytes"
	"net/url"
	"strings"
)

// need is how sure a key name alone makes us that its value is a
// credential.
type need int

const (
	// notSecret: the name says nothing; the value is judged by its shape
	// alone (the shape rules).
	notSecret need = iota
	// needSecretShape: a generic name such as "token" or "key", which also
	// names ordinary data (a logprobs token, a map key); the value is
	// redacted only when it looks like a credential (see secretShaped).
	needSecretShape
	// needOpaque: a *_token name with an unknown prefix (csrf_token,
	// github_token); the value is redacted when it is one opaque word.
	needOpaque
	// anyValue: the name is a credential's (password, api_key,
	// client_secret, …); any non-empty value is redacted.
	anyValue
)

// strongSuffixes are normalized key endings (lower case, letters and digits
// only) that name a credential whatever comes before them, so prefixed keys
// (openai_api_key, aws_secret_access_key, bot_token, sessionToken) are
// caught. A trailing "s" (api_keys) is allowed.
var strongSuffixes = []string{
	"password", "passwd", "passphrase", "secret", "apikey", "apitoken",
	"accesstoken", "refreshtoken", "idtoken", "authtoken", "sessiontoken",
	"bottoken", "bearertoken", "oauthtoken", "securitytoken", "privatetoken",
	"personalaccesstoken", "privatekey", "secretkey", "secretaccesskey",
	"accesskey", "accesskeysecret", "clientsecret", "subscriptionkey",
	"signingkey", "encryptionkey", "masterkey", "authorization", "cookie",
	"credential", "credentials", "sessionkey", "webhooksecret",
}

// dataTokenKeys are *_token names that carry ordinary data: tokenizer
// special tokens and pagination cursors.
var dataTokenKeys = map[string]bool{
	"eostoken": true, "bostoken": true, "padtoken": true, "unktoken": true,
	"septoken": true, "clstoken": true, "masktoken": true, "stoptoken": true,
	"nexttoken": true, "pagetoken": true, "nextpagetoken": true,
	"continuationtoken": true, "synctoken": true, "cursortoken": true,
	"starttoken": true, "endtoken": true, "imagetoken": true, "specialtoken": true,
	"maxtoken": true, "mintoken": true, "counttoken": true, "totaltoken": true,
}

// notCredentialEndings end names that mention a credential without holding
// one: password_policy, secret_name, client_secret_expires_at.
var notCredentialEndings = []string{
	"expiresat", "expiry", "expires", "name", "type", "policy", "length",
	"required", "hint", "enabled", "ref", "count", "ttl",
	"rotation", "version", "path", "url", "uri", "header", "field",
}

// normKey lower-cases name and keeps only its letters and digits, after
// percent-decoding (api%5Fkey is api_key).
func normKey(name string) string {
	if strings.IndexByte(name, '%') >= 0 {
		if d, err := url.PathUnescape(name); err == nil {
			name = d
		}
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			b.WriteByte(c)
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		}
	}
	return b.String()
}

// keyNeed classifies a key or parameter name. inQuery is set for URL query
// and form parameters, where short names (key, sig, auth) are credentials
// by convention (Google's ?key=, S3 and Azure SAS signatures).
func keyNeed(name string, inQuery bool) need {
	n := normKey(name)
	if n == "" {
		return notSecret
	}
	switch n {
	case "token", "key", "auth", "apikeyid":
		if inQuery {
			return anyValue
		}
		return needSecretShape
	case "xamzsecuritytoken":
		// AWS's temporary session credential: a secret wherever it stands
		// (a query parameter, a header line in text, a JSON key).
		return anyValue
	case "sig", "signature", "xamzsignature", "xgoogsignature",
		"xamzcredential", "xgoogcredential", "code":
		if inQuery && n != "code" {
			return anyValue
		}
		// JSON "signature" is data (Anthropic thinking signatures); "code"
		// is everywhere.
		return notSecret
	case "pwd", "pass":
		return anyValue
	}
	base := strings.TrimSuffix(n, "s")
	for _, end := range notCredentialEndings {
		if strings.HasSuffix(n, end) && !hasStrongSuffix(n) {
			return notSecret
		}
	}
	if hasStrongSuffix(n) || hasStrongSuffix(base) {
		return anyValue
	}
	if strings.Contains(n, "password") || strings.Contains(n, "passwd") || strings.Contains(n, "secret") {
		return anyValue
	}
	if strings.HasSuffix(base, "token") {
		if dataTokenKeys[base] || strings.HasSuffix(n, "tokens") {
			return notSecret
		}
		return needOpaque
	}
	return notSecret
}

func hasStrongSuffix(n string) bool {
	for _, s := range strongSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// valueIsSecret reports whether v, found under a key of the given need, is
// to be redacted.
func valueIsSecret(nd need, v []byte) bool {
	if len(v) == 0 || isMarker(v) {
		return false
	}
	switch nd {
	case anyValue:
		return true
	case needOpaque:
		return opaque(v, 8) && bytes.ContainsAny(v, "0123456789")
	case needSecretShape:
		return secretShaped(v)
	}
	return false
}

// opaque reports whether v is one word of at least min characters drawn
// from the alphabets credentials use (base64, base64url, hex, JWT).
func opaque(v []byte, min int) bool {
	if len(v) < min {
		return false
	}
	for _, c := range v {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == '~' || c == '+' || c == '/' || c == '=' || c == ':':
		default:
			return false
		}
	}
	return true
}

// secretShaped reports whether v looks like a generated credential rather
// than a word: one opaque run of 10 or more characters mixing letters and
// digits. A logprobs token ("I'm", " Foo") or a tokenizer piece never is.
func secretShaped(v []byte) bool {
	if !opaque(v, 10) {
		return false
	}
	var letter, digit bool
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letter = true
		}
	}
	return letter && digit
}

// headerWords are words of a header name (split at '-' and '_', lower
// case) that make the whole value a credential. Whole words, so
// x-ratelimit-remaining-tokens (a count) is not one.
var headerWords = map[string]string{
	"authorization": "authorization", "token": "token", "secret": "secret",
	"password": "password", "passwd": "password", "apikey": "api_key",
	"cookie": "cookie", "credential": "credential", "credentials": "credential",
	"signature": "signature",
}

// headerPairs are adjacent header-name words that name a credential.
var headerPairs = map[string]string{
	"api-key": "api_key", "access-key": "access_key", "subscription-key": "api_key",
	"private-key": "private_key", "secret-key": "secret_key", "application-key": "api_key",
	"app-key": "api_key", "auth-key": "api_key", "session-key": "session_key",
}

// headerKind returns the marker kind for a header name that carries a
// credential, or "".
func headerKind(name string) string {
	l := strings.ToLower(name)
	switch l {
	case "set-cookie", "cookie":
		return "cookie"
	case "proxy-authorization", "authorization", "x-authorization":
		return "authorization"
	case "x-api-key", "api-key":
		return "api_key"
	}
	if strings.HasPrefix(l, "access-control-") {
		// CORS headers name headers and modes, never hold a credential
		// (Access-Control-Allow-Credentials: true,
		// Access-Control-Allow-Headers: authorization, x-api-key).
		return ""
	}
	words := strings.FieldsFunc(l, func(r rune) bool { return r == '-' || r == '_' })
	for i, w := range words {
		if k, ok := headerWords[w]; ok {
			return k
		}
		if i+1 < len(words) {
			if k, ok := headerPairs[w+"-"+words[i+1]]; ok {
				return k
			}
		}
	}
	return ""
}

// kindOf makes a marker kind from a key name: lower case, letters, digits
// and '_' only, at most 40 bytes, so a marker never carries odd bytes of
// its own.
func kindOf(name string) string {
	if strings.IndexByte(name, '%') >= 0 {
		if d, err := url.PathUnescape(name); err == nil {
			name = d
		}
	}
	var b strings.Builder
	for i := 0; i < len(name) && b.Len() < 40; i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
			b.WriteByte(c)
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c == '-' || c == '.':
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "secret"
	}
	return b.String()
}
