package redact

import (
	"bytes"
	"encoding/json"
	"mime"
	"strings"
)

// Format is what a body is, for redaction: it decides which rules can find
// a credential in it without touching data that holds none. The shape
// rules (JWTs, provider key prefixes, AWS key ids, PEM blocks, bearer and
// Basic credentials, URL user-info) run on every format.
type Format int

const (
	// FormatText is a body of unknown type, plain text, or one that does
	// not parse as the type it claims: every rule runs, as in [Scan].
	FormatText Format = iota
	// FormatJSON is JSON, an event stream or NDJSON: JSON values under
	// credential keys (also in JSON nested in a string) and credential
	// query parameters of URLs in it. A line of a stream that is not JSON
	// (or a JSON body that does not parse) gets every rule.
	FormatJSON
	// FormatForm is an application/x-www-form-urlencoded body: the
	// values of credential fields.
	FormatForm
	// FormatCode is JavaScript, CSS, HTML, SVG, a source map or binary
	// data (images, fonts, archives): only the shape rules and credential
	// query parameters of URLs in it. Code names credentials without
	// holding them (this.credentials=t.credentials, .fa-cookie:before,
	// {credentials: "omit"}, <input type="password">).
	FormatCode
)

// FormatOf returns the Format of a body with the given Content-Type
// header value. An empty or unknown type is FormatText.
func FormatOf(contentType string) Format {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	}
	switch {
	case mt == "":
		return FormatText
	case mt == "application/x-www-form-urlencoded":
		return FormatForm
	case mt == "application/json", mt == "text/json", strings.HasSuffix(mt, "+json"),
		mt == "text/event-stream", isNDJSON(mt):
		return FormatJSON
	case mt == "application/javascript", mt == "text/javascript", mt == "application/x-javascript",
		mt == "application/ecmascript", mt == "text/ecmascript", mt == "text/css",
		mt == "text/html", mt == "application/xhtml+xml", mt == "image/svg+xml",
		mt == "application/wasm", mt == "application/octet-stream", mt == "application/pdf",
		mt == "application/zip", mt == "application/gzip", mt == "application/x-protobuf",
		strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "font/"), strings.HasPrefix(mt, "audio/"),
		strings.HasPrefix(mt, "video/"), strings.HasPrefix(mt, "application/font-"),
		strings.HasPrefix(mt, "application/x-font-"):
		return FormatCode
	}
	return FormatText
}

func isNDJSON(mt string) bool {
	switch mt {
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines", "application/json-seq":
		return true
	}
	return false
}

// lineJSON reports whether a JSON-format content type is read line by
// line (an event stream, NDJSON) rather than as one document.
func lineJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/event-stream" || isNDJSON(mt)
}

// BodyBytes is [Bytes] for a body with the given Content-Type: see
// [ScanBody]. b is never modified.
func BodyBytes(contentType string, b []byte) []byte {
	return Apply(b, ScanBody(contentType, b))
}

// ScanBody is [Scan] for a body whose Content-Type is known: it runs the
// rules of the body's [Format]. A JSON body that does not parse, and a
// line of an event stream or NDJSON whose data is not JSON, get every
// rule, so a body that lies about its type is still searched; a source
// map (JSON with "mappings" and "sources") is code.
func ScanBody(contentType string, b []byte) []Edit {
	f := FormatOf(contentType)
	if f == FormatJSON && !lineJSON(contentType) && isSourceMap(b) {
		f = FormatCode
	}
	var es []Edit
	switch f {
	case FormatText:
		return Scan(b)
	case FormatForm:
		es = scanShapes(b, es)
		es = barePairs(b, es, pairsForm)
	case FormatCode:
		es = scanShapes(b, es)
		es = barePairs(b, es, pairsURL)
	case FormatJSON:
		es = scanShapes(b, es)
		if lineJSON(contentType) {
			es = jsonLines(b, es)
		} else {
			// A body that does not parse gets every rule, as in Scan.
			es = quotedPairs(b, es)
			es = jsonPairs(b, es, b)
		}
	}
	return merge(dropMarkers(b, es))
}

// jsonPairs adds the unquoted pairs of b, a JSON body or a stream line
// whose JSON part is doc: only URLs' query parameters when doc is JSON,
// every pair otherwise (doc nil: not JSON).
//
// doc is validated only when it matters. Without an edit before it, the
// pairsAll mode visits every '=' the pairsURL mode visits and makes the
// same checks there but fewer (no "in a URL's query"), so where pairsAll
// finds no pair pairsURL finds none either: validating is left out for
// most bodies and stream lines, which hold no credential-named key=value
// or key: value. It was 40 % of redacting a clean chat stream
// (BenchmarkScanBody).
func jsonPairs(b []byte, es []Edit, doc []byte) []Edit {
	m := len(es)
	all := barePairs(b, es, pairsAll)
	if len(all) == m || !json.Valid(doc) {
		return all
	}
	// JSON: pairsURL's edits, over pairsAll's past m.
	return barePairs(b, es[:m], pairsURL)
}

// jsonLines runs the JSON rules on each line of an event stream or NDJSON
// body whose data (after "data:") is JSON, and every pair rule on the
// other lines.
func jsonLines(b []byte, es []Edit) []Edit {
	for start := 0; start < len(b); {
		end := bytes.IndexByte(b[start:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += start + 1
		}
		line := b[start:end]
		n := len(es)
		if !mayHoldPair(line) {
			start = end
			continue
		}
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

// mayHoldPair reports whether the pair rules (quotedPairs, barePairs) can
// find anything in line: every key they redact under holds a key word
// (keyTriggered) and ends before its ':' or '=', so a line with no key
// word before its last separator has no pair. A chat stream's lines
// hold their text after the last colon ("content":"…"), where a key
// word such as "token" is data: walking each line's colons twice, for
// the quoted and the bare pairs, was 80 % of redacting such a stream
// (BenchmarkScanBody/sse-tokens).
func mayHoldPair(line []byte) bool {
	last := len(line) - 1
	for ; last >= 0; last-- {
		if c := line[last]; c == ':' || c == '=' {
			break
		}
	}
	return last > 0 && keyTriggerSet.any(line[:last])
}

// isSourceMap reports whether b is a source map (version 3: "mappings"
// and "sources"), which holds code, not data; the )]}' prefix servers add
// against XSSI is allowed.
func isSourceMap(b []byte) bool {
	t := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(b), []byte(")]}'")))
	return len(t) > 0 && t[0] == '{' && bytes.Contains(t, []byte(`"mappings"`)) && bytes.Contains(t, []byte(`"sources"`))
}

// inURL reports whether the query parameter whose name starts at k sits in
// a URL: the run of text before it (back to a space, quote or bracket)
// holds the query's '?' and starts a path or holds a scheme's "://"
// (written ":\/\/" in JSON).
func inURL(b []byte, k int) bool {
	i := k - 1
	for ; i >= 0 && k-i <= 4096; i-- {
		switch b[i] {
		case ' ', '\t', '\r', '\n', '"', '\'', '`', '(', ')', '<', '>', '{', '}', '[', ']', ',':
			goto found
		}
	}
	if i >= 0 {
		return false // too long to be a URL we can tell
	}
found:
	seg := b[i+1 : k]
	if bytes.IndexByte(seg, '?') < 0 {
		return false
	}
	return (len(seg) > 0 && seg[0] == '/') || bytes.Contains(seg, []byte("://")) || bytes.Contains(seg, []byte(`:\/\/`))
}
