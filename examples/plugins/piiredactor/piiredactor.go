// Package piiredactor is the pii-redactor example plugin: the chain's
// response-body writer ([P9], P17). It replaces email addresses, phone
// numbers and payment card numbers in the buffered response body.
//
// Declaring writes_response_body makes the host buffer streamed responses
// too (P18), so the plugin always sees a whole body in OnResponse and
// rewrites it with SetResponseBody. It edits the raw text, so JSON and SSE
// framing survive; the replacement text is checked at start-up to be safe
// inside a JSON string.
//
// [P9]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package piiredactor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
)

// Name is the plugin's registered name.
const Name = "pii-redactor"

// Key is the extension key of the redaction counts by kind.
const Key = "pii-redactor"

// Description is the one-line catalog description (P5).
const Description = "Redacts emails, phone numbers and card numbers in response bodies"

// Kinds of personal data.
const (
	KindEmail = "email"
	KindPhone = "phone"
	KindCard  = "card"
)

// DefaultReplacement is written in place of a match; {kind} becomes the
// kind.
const DefaultReplacement = "[REDACTED:{kind}]"

// Config is the plugin's configuration block.
type Config struct {
	// Redact lists the kinds to redact; empty means all.
	Redact      []string `json:"redact,omitempty"`
	Replacement string   `json:"replacement,omitempty"`
}

var schema = &gateway.ConfigSchema{Fields: []gateway.Field{
	{Name: "redact", Type: "array", Enum: []string{KindEmail, KindPhone, KindCard}, Default: []string{KindEmail, KindPhone, KindCard}, Description: "Kinds of personal data to redact"},
	{Name: "replacement", Type: "string", Default: DefaultReplacement, Description: "Text written in place of a match; {kind} names the kind"},
}}

// Schema returns the configuration schema.
func Schema() *gateway.ConfigSchema { return schema }

// Factory registers the plugin.
func Factory() gateway.Factory {
	return config.Factory(Name, schema, New)
}

// detector finds one kind of personal data. ok vets a candidate in its
// surroundings (digit boundaries, checksum).
type detector struct {
	kind string
	re   *regexp.Regexp
	ok   func(body []byte, start, end int) bool
}

var (
	cardRe  = regexp.MustCompile(`\d(?:[ -]?\d){12,18}`)
	phoneRe = regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}`)
	emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
)

// Redactor is a pii-redactor instance; read-only after New and safe for
// concurrent exchanges.
type Redactor struct {
	detectors []detector
	repl      map[string][]byte
}

// New makes an instance from a decoded config.
func New(c Config) (*Redactor, error) {
	kinds := c.Redact
	if len(kinds) == 0 {
		kinds = []string{KindEmail, KindPhone, KindCard}
	}
	repl := c.Replacement
	if repl == "" {
		repl = DefaultReplacement
	}
	if strings.ContainsAny(repl, "\"\\<>&") || strings.ContainsFunc(repl, func(r rune) bool { return r < 0x20 }) {
		return nil, fmt.Errorf("%s config: field \"replacement\": %q has a character that is unsafe inside JSON or HTML (quote, backslash, <, >, & or a control character)", Name, repl)
	}
	p := &Redactor{repl: map[string][]byte{}}
	// Cards before phones: a card number holds phone-shaped runs.
	for _, kind := range []string{KindCard, KindPhone, KindEmail} {
		if !slices.Contains(kinds, kind) {
			continue
		}
		p.repl[kind] = []byte(strings.ReplaceAll(repl, "{kind}", kind))
		switch kind {
		case KindCard:
			p.detectors = append(p.detectors, detector{kind, cardRe, func(b []byte, s, e int) bool { return digitBounded(b, s, e) && luhn(b[s:e]) }})
		case KindPhone:
			p.detectors = append(p.detectors, detector{kind, phoneRe, digitBounded})
		case KindEmail:
			p.detectors = append(p.detectors, detector{kind, emailRe, func([]byte, int, int) bool { return true }})
		}
	}
	for i, k := range kinds {
		if k != KindEmail && k != KindPhone && k != KindCard {
			return nil, fmt.Errorf("%s config: redact[%d] %q is not one of email, phone, card", Name, i, k)
		}
	}
	return p, nil
}

// Name returns "pii-redactor".
func (*Redactor) Name() string { return Name }

// Capabilities: writes the response body (which implies reading, P4).
func (*Redactor) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{ReadsBody: true, WritesResponseBody: true, Description: Description,
		Extensions: []gateway.ExtensionSpec{{Key: Key, Writes: true, Description: "how many values of each kind were redacted",
			Schema: json.RawMessage(`{"type":"object","additionalProperties":{"type":"integer","minimum":1}}`)}}}
}

// OnRequest does nothing.
func (*Redactor) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// OnResponse redacts the buffered body of a textual response and records
// the counts under the "pii-redactor" extension.
func (p *Redactor) OnResponse(_ context.Context, ex *gateway.Exchange) gateway.Action {
	body := ex.ResponseBody()
	if len(body) == 0 || !textual(ex.Response.Header.Get("Content-Type")) {
		return gateway.Continue()
	}
	out, counts := p.Redact(body)
	if len(counts) > 0 && ex.SetResponseBody(out) {
		ex.SetExtension(Key, counts)
	}
	return gateway.Continue()
}

// Redact returns body with every match replaced, and the number of
// replacements by kind (nil when nothing matched; then out is body).
func (p *Redactor) Redact(body []byte) (out []byte, counts map[string]int) {
	out = body
	for _, d := range p.detectors {
		locs := d.re.FindAllIndex(out, -1)
		if len(locs) == 0 {
			continue
		}
		var b bytes.Buffer
		last, n := 0, 0
		for _, l := range locs {
			if !d.ok(out, l[0], l[1]) {
				continue
			}
			b.Write(out[last:l[0]])
			b.Write(p.repl[d.kind])
			last = l[1]
			n++
		}
		if n == 0 {
			continue
		}
		b.Write(out[last:])
		out = b.Bytes()
		if counts == nil {
			counts = map[string]int{}
		}
		counts[d.kind] += n
	}
	return out, counts
}

// textual reports whether a body of this content type is text worth
// scanning; no content type counts as text.
func textual(ct string) bool {
	ct = strings.ToLower(ct)
	return ct == "" || strings.HasPrefix(ct, "text/") || strings.Contains(ct, "json") ||
		strings.Contains(ct, "xml") || strings.Contains(ct, "x-www-form-urlencoded")
}

// digitBounded reports whether the match is not part of a longer number
// (a neighbouring digit, or a + sign before it).
func digitBounded(b []byte, s, e int) bool {
	if s > 0 && (isDigit(b[s-1]) || b[s-1] == '+') {
		return false
	}
	return e >= len(b) || !isDigit(b[e])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// luhn checks a card number's check digit, ignoring separators.
func luhn(b []byte) bool {
	sum, n, double := 0, 0, false
	for i := len(b) - 1; i >= 0; i-- {
		if !isDigit(b[i]) {
			continue
		}
		d := int(b[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
		n++
	}
	return n >= 13 && n <= 19 && sum%10 == 0
}

// Plugin bundles the factory for the catalog and for serving as a binary.
func Plugin() sdk.Plugin {
	f := Factory()
	return sdk.Plugin{Name: Name, Description: Description, Pipeline: &f}
}
