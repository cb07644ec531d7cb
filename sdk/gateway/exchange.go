package gateway

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"time"
)

// Direction says which chain an exchange runs through.
type Direction uint8

const (
	// Inbound: traffic arriving at the workload.
	Inbound Direction = iota
	// Outbound: traffic the workload sends.
	Outbound
)

func (d Direction) String() string {
	if d == Outbound {
		return "outbound"
	}
	return "inbound"
}

// ParseDirection parses "inbound" or "outbound".
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "inbound", "":
		return Inbound, nil
	case "outbound":
		return Outbound, nil
	}
	return 0, fmt.Errorf("direction %q: want inbound or outbound", s)
}

// Request is the request side of an exchange as plugins see it.
//
// URL is the request target as the host has it (an absolute URL, or a
// path with its query). The host also sets the target's parts (P35):
// Scheme ("http" or "https"; empty when the host cannot tell, and a plugin
// then picks its own default), Host (the authority, from the URL or the
// Host header), Path (unescaped, as net/url gives it), RawQuery (without
// the "?") and RemoteAddr (the client's address as the transport gives
// it, "ip:port"; empty when there is no client, as in a dry run).
//
// Header is the plugin's to change during OnRequest (P32): set, replace
// and delete; later plugins see the change and the upstream receives it,
// except the framing headers (see [IsFramingHeader]), which stay the
// host's.
type Request struct {
	Method     string
	URL        string
	Scheme     string
	Host       string
	Path       string
	RawQuery   string
	RemoteAddr string
	Header     http.Header
}

// FillTarget sets the target's parts that are empty from r.URL, and the
// host from hostHeader when the URL has none: what a host that only has a
// URL and a Host header (a fixture) does to fill them (P35). A URL that
// does not parse leaves them empty.
func (r *Request) FillTarget(hostHeader string) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return
	}
	if r.Scheme == "" {
		r.Scheme = u.Scheme
	}
	if r.Host == "" {
		r.Host = u.Host
		if r.Host == "" {
			r.Host = hostHeader
		}
	}
	if r.Path == "" {
		r.Path = u.Path
	}
	if r.RawQuery == "" {
		r.RawQuery = u.RawQuery
	}
}

// Response is the response side of an exchange as plugins see it. Status is
// zero until the upstream answered.
//
// Header is the plugin's to change during OnResponse of a buffered
// response and, for a streamed one, during the first frame's calls, before
// the head goes to the client (P33); a change after the head was sent is
// refused (undone) and reported. Framing headers stay the host's.
type Response struct {
	Status int
	Header http.Header
}

// OutcomeKind is how an exchange ended (P29).
type OutcomeKind uint8

const (
	OutcomeAllow OutcomeKind = iota + 1
	OutcomeDeny
	OutcomeError
)

func (k OutcomeKind) String() string {
	switch k {
	case OutcomeAllow:
		return "allow"
	case OutcomeDeny:
		return "deny"
	case OutcomeError:
		return "error"
	}
	return "none"
}

// Outcome is how an exchange ended, available during OnFinish only (P29).
type Outcome struct {
	Kind OutcomeKind
	// Status is the status code the client got.
	Status int
	// DeniedBy names the plugin whose rejection denied the exchange, if any.
	DeniedBy string
	// Reason is the denial or error reason.
	Reason   string
	Duration time.Duration
}

// Phase is the hook an exchange is in; it decides which writes are legal.
type Phase uint8

const (
	PhaseRequest Phase = iota
	PhaseResponse
	PhaseFrame
	PhaseFinish
)

// Write records a body write a plugin attempted.
type Write struct {
	Plugin   string
	Response bool // false: request body
	Applied  bool
	// Undeclared says the plugin does not declare the write capability
	// (P17); Body is then the body it tried to write, so that a host
	// carrying the write across a process boundary can hand it to the
	// runtime, which decides (choice P17.undeclared-write).
	Undeclared bool
	Body       []byte
	// Kept says an undeclared write was kept in memory for the later
	// plugins, though not applied: it never reaches the wire (see
	// [Control.KeepUndeclaredWrites]).
	Kept bool
	// Why is set when the write was refused or kept.
	Why string
}

// Exchange is the per-exchange context plugins see: the request and
// response, their bodies, parser extensions, typed state (P31) and, during
// OnFinish, the outcome (P29).
//
// An Exchange is used by one exchange at a time; it is not safe for
// concurrent use by plugins.
type Exchange struct {
	Direction Direction
	Request   Request
	Response  Response

	reqBody  []byte
	respBody []byte

	extensions map[string]any
	extChanges []ExtensionChange // keys set or deleted since the last TakeExtensionChanges
	state      map[*keyID]any

	identity Identity
	// idGen counts SetIdentity calls: 0 means no identity (P36). Hosts
	// compare it to learn whether the identity changed.
	idGen uint32

	outcome    Outcome
	hasOutcome bool

	// Set by the host before each hook call.
	cur       string
	curWReq   bool
	curWResp  bool
	phase     Phase
	mutated   uint8 // bit 0 request, bit 1 response; since the last TakeMutated
	writes    []Write
	bodiesOff bool
	// keepUndeclared: an undeclared write is kept in memory rather than
	// refused (Control.KeepUndeclaredWrites).
	keepUndeclared bool
}

// RequestBody returns the request body, or nil when no plugin in the chain
// reads bodies (P11).
func (ex *Exchange) RequestBody() []byte { return ex.reqBody }

// ResponseBody returns the buffered response body, or nil when there is none
// or no plugin reads bodies (P11). For a streamed response it is nil; frames
// arrive through OnResponseFrame.
func (ex *Exchange) ResponseBody() []byte { return ex.respBody }

// SetRequestBody replaces the request body. Only the chain's declared
// request-body writer may do this (P17); anyone else's write never
// reaches the wire: it is refused and recorded or, in a runtime that
// keeps such writes (choice P17.undeclared-write), seen by the later
// plugins only. It reports whether it applied.
func (ex *Exchange) SetRequestBody(b []byte) bool { return ex.write(false, b) }

// SetResponseBody replaces the response body, under the same rule as
// SetRequestBody for the response-body writer.
func (ex *Exchange) SetResponseBody(b []byte) bool { return ex.write(true, b) }

func (ex *Exchange) write(resp bool, b []byte) bool {
	w := Write{Plugin: ex.cur, Response: resp}
	allowed := ex.curWReq
	if resp {
		allowed = ex.curWResp
	}
	switch {
	case ex.phase == PhaseFinish:
		w.Why = "body writes during OnFinish are dropped (P30)"
	case !allowed && resp:
		w.Why = "plugin does not declare writes_response_body (P17)"
	case !allowed:
		w.Why = "plugin does not declare writes_request_body (P17)"
	case !resp && ex.phase != PhaseRequest:
		w.Why = "the request body can only change during OnRequest"
	case resp && ex.phase != PhaseResponse:
		w.Why = "the response body can only change during OnResponse of a buffered response"
	default:
		w.Applied = true
	}
	if !allowed && ex.phase != PhaseFinish {
		w.Undeclared, w.Body = true, b
		w.Kept = ex.keepUndeclared && ex.keepable(resp)
	}
	switch {
	case w.Applied && resp:
		ex.respBody = b
		ex.mutated |= 2
	case w.Applied:
		ex.reqBody = b
		ex.mutated |= 1
	case w.Kept && resp:
		ex.respBody = b // for the later plugins only: not a mutation
	case w.Kept:
		ex.reqBody = b
	}
	ex.writes = append(ex.writes, w)
	return w.Applied
}

// keepable reports whether an undeclared write of the request (or
// response) body may be kept: in the phase where the declared writer's
// would apply, and only while the body is held, since plugins see no
// body when no plugin reads bodies (P11).
func (ex *Exchange) keepable(resp bool) bool {
	if resp {
		return ex.phase == PhaseResponse && ex.respBody != nil
	}
	return ex.phase == PhaseRequest && ex.reqBody != nil
}

// SetExtension stores a parser's result under key for later plugins, such as
// "mcp" or "inference". Values must marshal to JSON so that they cross
// process boundaries unchanged.
func (ex *Exchange) SetExtension(key string, v any) {
	if ex.extensions == nil {
		ex.extensions = make(map[string]any)
	}
	ex.noteExtension(key)
	ex.extensions[key] = v
}

// Extension returns the value stored under key.
func (ex *Exchange) Extension(key string) (any, bool) {
	v, ok := ex.extensions[key]
	return v, ok
}

// Extensions returns the extension map. Callers must not modify it.
func (ex *Exchange) Extensions() map[string]any { return ex.extensions }

// Identity is the exchange's verified identity (P36): who the request is
// from, as an authentication plugin established it. Its JSON form is the
// one that crosses the process boundary (docs/protocol.md).
type Identity struct {
	// Subject is the principal (a JWT's sub).
	Subject string `json:"subject"`
	// ClientID is the client the credential was issued to (azp or
	// client_id), if known.
	ClientID string `json:"client_id,omitempty"`
	// Scopes are the granted scopes, in the credential's order.
	Scopes []string `json:"scopes,omitempty"`
	// Claims are the verified claims as a JSON object, for readers that
	// need more than the three fields. Nil: none kept.
	Claims json.RawMessage `json:"claims,omitempty"`
}

// SetIdentity establishes the exchange's verified identity for every later
// hook of this exchange, in any plugin, OnFinish included (P36). A later
// call replaces it. The identity belongs to this exchange only.
func (ex *Exchange) SetIdentity(id Identity) {
	ex.identity = id
	ex.idGen++
	if ex.idGen == 0 { // wrapped: 0 means unset
		ex.idGen = 1
	}
}

// Identity returns the exchange's identity; ok is false until a plugin set
// one (P36).
func (ex *Exchange) Identity() (id Identity, ok bool) {
	return ex.identity, ex.idGen != 0
}

// Outcome returns how the exchange ended. ok is false outside OnFinish
// (P29).
func (ex *Exchange) Outcome() (o Outcome, ok bool) {
	if !ex.hasOutcome || ex.phase != PhaseFinish {
		return Outcome{}, false
	}
	return ex.outcome, true
}

// Key is a typed per-exchange state key (P31). Make one per purpose with
// NewKey, usually in a package-level variable.
type Key[T any] struct{ id *keyID }

type keyID struct{ name string }

// NewKey makes a state key. Two keys are distinct even with the same name;
// the name is for diagnostics.
func NewKey[T any](name string) Key[T] { return Key[T]{id: &keyID{name: name}} }

// Name returns the name the key was made with.
func (k Key[T]) Name() string { return k.id.name }

// SetState stores v under k on this exchange only.
func SetState[T any](ex *Exchange, k Key[T], v T) {
	if ex.state == nil {
		ex.state = make(map[*keyID]any)
	}
	ex.state[k.id] = v
}

// GetState returns the value stored under k on this exchange.
func GetState[T any](ex *Exchange, k Key[T]) (T, bool) {
	v, ok := ex.state[k.id]
	if !ok {
		var zero T
		return zero, false
	}
	return v.(T), true
}

// Control is the host's handle on an Exchange: runtimes, conformance hosts
// and plugin tests use it to drive an exchange. Plugins never get one.
type Control struct{ ex *Exchange }

// NewExchange makes an exchange and the host's handle on it.
func NewExchange(dir Direction, req Request) (*Exchange, *Control) {
	if req.Header == nil {
		req.Header = http.Header{}
	}
	ex := &Exchange{Direction: dir, Request: req}
	return ex, &Control{ex: ex}
}

// Reset makes the exchange a new one of req in direction dir, as
// NewExchange does, but in the same memory: a host that drives exchanges
// one after the other can keep one Exchange and Control instead of
// allocating both for each. The host must be sure that nothing uses the
// exchange any more: no plugin call still running (an OnFinish abandoned
// past its deadline may be, P30), nothing the host kept from it. All it
// held (bodies, extensions, typed state, outcome) is gone; the extension
// map is dropped rather than cleared, since Extensions handed it out.
func (c *Control) Reset(dir Direction, req Request) {
	if req.Header == nil {
		req.Header = http.Header{}
	}
	st := c.ex.state
	clear(st) // private to the exchange: its buckets are reused
	chs := c.ex.extChanges
	clear(chs) // drop the previous values it held
	*c.ex = Exchange{Direction: dir, Request: req, state: st, extChanges: chs[:0]}
}

// Exchange returns the exchange this handle drives.
func (c *Control) Exchange() *Exchange { return c.ex }

// Enter tells the exchange which plugin is about to be called, in which
// phase, and which body writes it declared. The host calls it before every
// hook call.
func (c *Control) Enter(plugin string, phase Phase, writesReq, writesResp bool) {
	ex := c.ex
	ex.cur, ex.phase, ex.curWReq, ex.curWResp = plugin, phase, writesReq, writesResp
}

// KeepUndeclaredWrites makes the exchange keep a body write by a plugin
// that does not declare it (choice P17.undeclared-write, alternative
// kept, as AuthBridge's Context.SetBody does): where the declared
// writer's write would apply and while the body is held, the later
// plugins see the written body; the write is still not applied
// (SetRequestBody reports false, the Write is marked Kept, nothing is
// marked mutated), so the host must send the declared writer's body, or
// the one it read, and never this one. Off by default, and after Reset.
func (c *Control) KeepUndeclaredWrites(keep bool) { c.ex.keepUndeclared = keep }

// SetRequestBody sets the request body as the host read it (nil: not
// buffered, P11).
func (c *Control) SetRequestBody(b []byte) { c.ex.reqBody = b }

// SetResponseBody sets the response body as the host read it.
func (c *Control) SetResponseBody(b []byte) { c.ex.respBody = b }

// SetResponse sets the upstream's status and headers.
func (c *Control) SetResponse(r Response) {
	if r.Header == nil {
		r.Header = http.Header{}
	}
	c.ex.Response = r
}

// SetOutcome makes the outcome available to OnFinish.
func (c *Control) SetOutcome(o Outcome) { c.ex.outcome, c.ex.hasOutcome = o, true }

// TakeMutated reports which bodies changed since the last call and resets
// the record.
func (c *Control) TakeMutated() (request, response bool) {
	m := c.ex.mutated
	c.ex.mutated = 0
	return m&1 != 0, m&2 != 0
}

// TakeWrites returns the body writes attempted since the last call, applied
// or refused, and resets the record.
func (c *Control) TakeWrites() []Write {
	w := c.ex.writes
	c.ex.writes = nil
	return w
}

// IdentityGen returns a number that changes whenever SetIdentity is called
// and is 0 while no identity is set: a host carrying the identity across a
// process boundary sends it only when it changed.
func (c *Control) IdentityGen() uint32 { return c.ex.idGen }

// SetExtensions replaces the extension map wholesale; hosts use it to carry
// a plugin's results across a process boundary.
func (c *Control) SetExtensions(m map[string]any) { c.ex.extensions = m }

// Clone returns a copy of the exchange and a handle on it. A host calls it
// while no plugin is using the exchange, to keep a spare it can go on with
// if a later call is abandoned while it may still be using the original (an
// OnFinish that overran its deadline, P30). Headers, extensions and state
// are copied one level deep; bodies are shared, since writes replace them
// rather than change them in place. The record of writes is not copied.
func (c *Control) Clone() (*Exchange, *Control) {
	ex := *c.ex
	ex.Request.Header = ex.Request.Header.Clone()
	ex.Response.Header = ex.Response.Header.Clone()
	ex.extensions = maps.Clone(ex.extensions)
	ex.state = maps.Clone(ex.state)
	ex.writes = nil
	ex.extChanges = nil
	ex.mutated = 0
	return &ex, &Control{ex: &ex}
}
