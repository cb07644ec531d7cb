// Package gateway holds the contract types of the request pipeline (family P
// of the abkit contracts): what a gateway plugin author implements, and what
// every abkit runtime, in-process or across a process boundary, drives.
//
// A plugin implements [Plugin] and, optionally, any of [Initializer],
// [Shutdowner], [Finisher], [StreamingResponder] and [Readier]. It is
// registered through a [Factory], which fixes its name, its static
// [Capabilities] ([P2]) and its configuration schema.
//
// A minimal plugin that rejects requests without an API version header:
//
//	type versionGate struct{}
//
//	func (versionGate) Name() string { return "version-gate" }
//	func (versionGate) Capabilities() gateway.Capabilities {
//		return gateway.Capabilities{Description: "Rejects requests without an X-Api-Version header"}
//	}
//	func (versionGate) OnRequest(ctx context.Context, ex *gateway.Exchange) gateway.Action {
//		if ex.Request.Header.Get("X-Api-Version") == "" {
//			return gateway.Reject(400, "missing X-Api-Version")
//		}
//		return gateway.Continue()
//	}
//	func (versionGate) OnResponse(ctx context.Context, ex *gateway.Exchange) gateway.Action {
//		return gateway.Continue()
//	}
//
// # Host-side API
//
// A few exported names are for hosts, not for plugins: [Control] and
// [NewExchange] (a host's handle on an exchange: entering hooks, setting
// bodies, the response and the outcome, collecting writes), and
// [ProbeConfigs] (the configs a host tries to describe a plugin). They live
// here because Control reaches into the Exchange's unexported state, which
// only this package can do, and every host (abkit's runtimes, the
// conformance suite, sdk/plugintest) shares them. A plugin never gets a
// Control and never needs to call these; a plugin's tests drive hooks
// through sdk/plugintest instead.
//
// [P2]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Plugin is the behaviour every pipeline plugin has (P1, P15, P16).
//
// OnRequest runs in declaration order, OnResponse in reverse declaration
// order. The exchange is valid only during the call.
type Plugin interface {
	// Name is the plugin's registered name (P1).
	Name() string
	// Capabilities are static: every instance of one factory returns the
	// same value (P2).
	Capabilities() Capabilities
	OnRequest(ctx context.Context, ex *Exchange) Action
	OnResponse(ctx context.Context, ex *Exchange) Action
}

// Initializer is implemented by plugins that need set-up before traffic (P12).
type Initializer interface {
	Init(ctx context.Context) error
}

// Shutdowner is implemented by plugins that release resources at stop (P13).
// The context carries the host's deadline.
type Shutdowner interface {
	Shutdown(ctx context.Context) error
}

// Finisher is implemented by plugins that run once per exchange after it
// ended (P26–P30), for example to release a reservation taken in OnRequest.
// ctx is a fresh context with a host-set deadline, not the request's. The
// outcome is available through ex.Outcome.
type Finisher interface {
	OnFinish(ctx context.Context, ex *Exchange) error
}

// StreamingResponder is implemented by plugins that see a streamed response
// frame by frame (P19–P25). A streaming plugin never gets OnResponse (P23).
//
// frame holds one complete SSE event as raw bytes; it belongs to the host and
// is valid only during the call (P24): copy what you keep. After the last
// frame every streaming plugin gets exactly one call with last=true and an
// empty frame (P21). For a non-streamed response it gets exactly one call
// with the whole body and last=true (P22).
type StreamingResponder interface {
	OnResponseFrame(ctx context.Context, ex *Exchange, frame []byte, last bool) Action
}

// Readier is implemented by plugins that report readiness (P14). Ready must
// be cheap and safe for concurrent use; nil means ready, an error says why
// not.
type Readier interface {
	Ready(ctx context.Context) error
}

// Capabilities are a plugin's static, type-level metadata (P3).
type Capabilities struct {
	ReadsBody          bool     `json:"reads_body"`
	WritesRequestBody  bool     `json:"writes_request_body"`
	WritesResponseBody bool     `json:"writes_response_body"`
	Requires           []string `json:"requires,omitempty"`
	RequiresAny        []string `json:"requires_any,omitempty"`
	Description        string   `json:"description"`
	// Extensions declares the exchange extensions the plugin writes and
	// reads, each with an optional JSON Schema (see [ExtensionSpec]). Like
	// the rest of the capabilities it is type-level (P2). Nil declares
	// nothing: the plugin's extensions are untyped.
	Extensions []ExtensionSpec `json:"extensions,omitempty"`
}

// Normalize returns c with the implications of P4 applied: either write
// capability implies ReadsBody. Slices are copied so the result shares no
// memory with c.
func (c Capabilities) Normalize() Capabilities {
	if c.WritesRequestBody || c.WritesResponseBody {
		c.ReadsBody = true
	}
	c.Requires = slices.Clone(c.Requires)
	c.RequiresAny = slices.Clone(c.RequiresAny)
	c.Extensions = cloneSpecs(c.Extensions)
	return c
}

// Equal reports whether two capability values are the same, as P2 requires of
// two instances of one factory.
func (c Capabilities) Equal(o Capabilities) bool {
	return c.ReadsBody == o.ReadsBody &&
		c.WritesRequestBody == o.WritesRequestBody &&
		c.WritesResponseBody == o.WritesResponseBody &&
		slices.Equal(c.Requires, o.Requires) &&
		slices.Equal(c.RequiresAny, o.RequiresAny) &&
		c.Description == o.Description &&
		slices.EqualFunc(c.Extensions, o.Extensions, ExtensionSpec.Equal)
}

// MaxDescriptionRunes is the longest description P5 allows.
const MaxDescriptionRunes = 80

// CheckDescription reports why d breaks P5, or nil: it must be non-empty,
// one line, and at most 80 runes.
func CheckDescription(d string) error {
	switch {
	case d == "":
		return fmt.Errorf("description is empty; write one line of at most %d characters saying what the plugin does", MaxDescriptionRunes)
	case containsLineBreak(d):
		return fmt.Errorf("description has more than one line; keep it to one line of at most %d characters", MaxDescriptionRunes)
	case utf8.RuneCountInString(d) > MaxDescriptionRunes:
		return fmt.Errorf("description is %d characters long; shorten it to at most %d", utf8.RuneCountInString(d), MaxDescriptionRunes)
	}
	return nil
}

func containsLineBreak(s string) bool {
	for _, r := range s {
		switch r {
		case '\n', '\r', '\u2028', '\u2029', '\u0085':
			return true
		}
	}
	return false
}

// Factory registers a plugin type under a name. Every instance New returns
// must report the same Name and Capabilities (P2).
type Factory struct {
	// Name is the registered name chain entries refer to (P1).
	Name string
	// Config describes the configuration block the plugin takes. Nil means
	// the plugin takes no configuration, and a chain entry that gives one is
	// a build error (P6).
	Config *ConfigSchema
	// New makes an instance. config is the entry's raw JSON config block, or
	// nil when the entry has none.
	New func(config json.RawMessage) (Plugin, error)
}

// ConfigSchema describes a plugin's configuration block.
//
// A plugin that takes configuration but describes only part of it, or none
// (a port of a plugin that decodes its own config), sets Open, so that
// hosts check only the fields listed, and gives Examples, so that hosts can
// make an instance to describe it: without either, the conformance suite
// reports its P6 probe as not probed (a skip with the reason), not as a
// failure.
type ConfigSchema struct {
	Fields []Field `json:"fields"`
	// Open: the block may hold keys Fields does not list; they are the
	// plugin's to check.
	Open bool `json:"open,omitempty"`
	// Examples are config blocks the plugin accepts, tried after the
	// defaults and the sample when a host probes it (ProbeConfigs).
	Examples []json.RawMessage `json:"examples,omitempty"`
}

// Field is one configuration field. Type is one of string, integer, number,
// boolean, array, object, duration.
//
// An integer is a whole number that fits in 64 bits (1, 2.0 and 1e3 are
// integers; 1.5 and 1e30 are not); a number is any finite number. Minimum
// and Maximum bound either, inclusive. An enum of an integer or number
// field lists its values as decimal text ("1", "2.5") and is compared by
// value.
type Field struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Required    bool     `json:"required,omitempty"`
	Description string   `json:"description,omitempty"`
	Default     any      `json:"default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Fields      []Field  `json:"fields,omitempty"`
	// Minimum and Maximum bound an integer or number field; nil: no bound.
	Minimum *float64 `json:"minimum,omitempty"`
	Maximum *float64 `json:"maximum,omitempty"`
}

// ActionKind says whether a hook lets the exchange go on.
type ActionKind uint8

const (
	// ActContinue lets the exchange go on. It is the zero value.
	ActContinue ActionKind = iota
	// ActReject stops the chain and denies (or, for a response, rejects) the
	// exchange with a status and reason.
	ActReject
)

func (k ActionKind) String() string {
	switch k {
	case ActContinue:
		return "continue"
	case ActReject:
		return "reject"
	}
	return fmt.Sprintf("ActionKind(%d)", uint8(k))
}

// Action is a hook's answer. The zero value is Continue.
type Action struct {
	Kind   ActionKind
	Status int
	Reason string
	// Rejection, when set on a rejection, is what the client gets with the
	// denial besides the status: response headers and a body (P34). Nil
	// means the runtime's plain-text reason body (P15).
	Rejection *Rejection
}

// Rejection is the response a rejecting plugin gives the client (P34): a
// bearer challenge's WWW-Authenticate, a rate limit's Retry-After, a JSON
// error body.
//
// Header is merged into the denial's headers. Headers the host manages
// for framing (Content-Length, Transfer-Encoding, Content-Encoding and the
// hop-by-hop headers, see [IsFramingHeader]) stay the host's: the runtime
// drops them from Header and warns. Body, when non-nil, replaces the
// plain-text reason body; ContentType is its media type (empty: the
// runtime uses text/plain; charset=utf-8 when Body is set). A
// Content-Type in Header is used when ContentType is empty.
type Rejection struct {
	Header      http.Header
	Body        []byte
	ContentType string
}

// RejectWith stops the chain like [Reject] and gives the client r's
// headers and body with the status (P34).
func RejectWith(status int, reason string, r Rejection) Action {
	return Action{Kind: ActReject, Status: status, Reason: reason, Rejection: &r}
}

// Challenge rejects with 401 and a bearer challenge (RFC 6750 section 3):
// WWW-Authenticate: Bearer realm="realm", plus error="code" when code is
// not empty (for example "invalid_token").
func Challenge(realm, code, reason string) Action {
	v := "Bearer realm=" + strconv.Quote(realm)
	if code != "" {
		v += ", error=" + strconv.Quote(code)
	}
	return RejectWith(http.StatusUnauthorized, reason, Rejection{Header: http.Header{"Www-Authenticate": {v}}})
}

// RateLimited rejects with 429 and Retry-After in whole seconds (rounded
// up; at least 1) when retryAfter is positive.
func RateLimited(retryAfter time.Duration, reason string) Action {
	var h http.Header
	if retryAfter > 0 {
		secs := int64((retryAfter + time.Second - 1) / time.Second)
		h = http.Header{"Retry-After": {strconv.FormatInt(secs, 10)}}
	}
	return RejectWith(http.StatusTooManyRequests, reason, Rejection{Header: h})
}

// IsFramingHeader reports whether name (any case) is a header the host
// manages for the message's framing and the connection: Content-Length,
// Content-Encoding, Transfer-Encoding, Trailer, TE, Connection,
// Keep-Alive, Upgrade, Proxy-Connection. A plugin's changes to them are
// not applied (P32, P33, P34).
func IsFramingHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Content-Length", "Content-Encoding", "Transfer-Encoding", "Trailer", "Te",
		"Connection", "Keep-Alive", "Upgrade", "Proxy-Connection":
		return true
	}
	return false
}

// FramingHeaderNames returns the canonical names IsFramingHeader reports.
func FramingHeaderNames() [9]string {
	return [9]string{"Content-Length", "Content-Encoding", "Transfer-Encoding", "Trailer", "Te",
		"Connection", "Keep-Alive", "Upgrade", "Proxy-Connection"}
}

// Continue lets the exchange go on.
func Continue() Action { return Action{} }

// Reject stops the chain with an HTTP status and a reason for the operator.
// A status outside 400–599 is replaced by 403 by the runtime, which warns.
func Reject(status int, reason string) Action {
	return Action{Kind: ActReject, Status: status, Reason: reason}
}

// IsContinue reports whether a lets the exchange go on.
func (a Action) IsContinue() bool { return a.Kind == ActContinue }
