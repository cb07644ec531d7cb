// Package redact removes credentials, and only credentials, from text a
// plugin logs or stores: bearer tokens, API keys, JWTs, URL passwords and
// credential query parameters, credential headers. It is abkit's own
// redaction engine (the one its fixtures, traces and reports go through,
// rules in docs/redaction.md), so a plugin's log reads like abkit's.
//
// Each credential is replaced by a marker naming what was removed, such as
// "[REDACTED:bearer]"; the marker holds no quote or backslash, so JSON
// stays valid. Text with nothing to redact is returned as it is.
package redact

import (
	"net/http"

	"github.com/abkit/abkit/internal/redact"
)

// String returns s with credentials replaced by markers.
func String(s string) string { return redact.String(s) }

// Bytes is [String] for byte slices of any content, text or not.
func Bytes(b []byte) []byte { return redact.Bytes(b) }

// URL returns u with credentials replaced by markers: the password in the
// user-info, credential query parameters and token-shaped path segments.
func URL(u string) string { return redact.URL(u) }

// Header returns a copy of h in which the values of credential headers
// (Authorization, Cookie, X-Api-Key, …) are replaced by markers.
func Header(h http.Header) http.Header { return redact.Header(h) }

// Marker returns the marker that replaces a credential of kind, such as
// Marker("bearer") == "[REDACTED:bearer]".
func Marker(kind string) string { return redact.Marker(kind) }
