package runtimesuite

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/conformance"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// Call is one recorded probe call: what the runtime did and what the hook
// could observe.
type Call struct {
	// Seq orders every call of a session.
	Seq   int
	Probe string
	Hook  string
	// Exchange is the exchange's index in the scenario.
	Exchange uint32
	// Frame and FrameIndex (the probe's count of earlier non-last frames
	// of the exchange) for frame calls.
	Frame      string
	FrameIndex int
	Last       bool
	CtxDone    bool
	Deadline   time.Duration
	Outcome    *abkitv1.Outcome // nil when absent
	State      *string          // nil when unset
	// ReqBody is nil when the hook saw no request body (P11).
	ReqBody *string
	// RespBody is nil when the hook saw no response body.
	RespBody *string
	Point    string
	Payload  string
	Value    string
	// Family P: the request as the hook saw it (method, URL, parts and
	// header, no body), the response header (nil before the upstream
	// answered) and the identity as JSON ("" when none is set).
	Request    *abkitv1.HTTPRequest
	ReqHeader  http.Header
	RespHeader http.Header
	Identity   string
	// Reply is what the probe answered (set once the script has run;
	// monitors read it: which state and identity the exchange set).
	Reply *abkitv1.ProbeReply
}

// Script answers one call; nil means the neutral answer (continue, pass).
type Script func(c *Call) *abkitv1.ProbeReply

type probe struct {
	name   string
	script Script
	s      *Session
	frames map[uint32]int
}

// Session is one case's set of probes on a runtime and their recorded
// calls.
type Session struct {
	r *Runtime

	mu    sync.Mutex
	ids   []uint32
	calls []Call
}

// session starts a session on the case's runtime; the probes are removed
// when the case ends.
func session(t *conformance.T) *Session {
	r, ok := t.Subject().(*Runtime)
	if !ok {
		t.Fatalf("P1", "the runtime suite needs a runtime subject, got %T", t.Subject())
	}
	return &Session{r: r}
}

// Probe adds a probe and returns its number for ProbeSpec.
func (s *Session) Probe(name string, script Script) uint32 {
	id := s.r.next.Add(1)
	s.r.mu.Lock()
	s.r.probes[id] = &probe{name: name, script: script, s: s, frames: map[uint32]int{}}
	s.r.mu.Unlock()
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	return id
}

// Close removes the session's probes.
func (s *Session) Close() {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	for _, id := range s.ids {
		delete(s.r.probes, id)
	}
}

// Calls returns the calls recorded so far, in order.
func (s *Session) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Broker is the broker ID scenarios name.
func (s *Session) Broker() uint32 { return s.r.broker }

// RPC is the runtime's client.
func (s *Session) RPC() abkitv1.RuntimeClient { return s.r.rpc }

type probeServer struct {
	abkitv1.UnimplementedProbeServer
	r *Runtime
}

func (ps probeServer) Call(_ context.Context, pc *abkitv1.ProbeCall) (*abkitv1.ProbeReply, error) {
	ps.r.mu.Lock()
	p := ps.r.probes[pc.GetProbe()]
	ps.r.mu.Unlock()
	if p == nil {
		return nil, fmt.Errorf("no probe %d in any running scenario", pc.GetProbe())
	}
	c := Call{Probe: p.name, Hook: pc.GetHook(), Exchange: pc.GetExchange(), Last: pc.GetLast(), CtxDone: pc.GetCtxDone(),
		Deadline: time.Duration(pc.GetDeadlineNs()), Point: pc.GetPoint(), Payload: string(pc.GetPayloadJson()), Value: string(pc.GetValueJson())}
	if pc.GetHasOutcome() {
		c.Outcome = pc.GetOutcome()
	}
	if pc.GetHasState() {
		st := pc.GetState()
		c.State = &st
	}
	if pc.GetHasRequestBody() {
		b := string(pc.GetRequestBody())
		c.ReqBody = &b
	}
	if pc.GetHasResponseBody() {
		b := string(pc.GetResponseBody())
		c.RespBody = &b
	}
	if rq := pc.GetRequest(); rq != nil {
		c.Request, c.ReqHeader = rq, abkitv1.HeaderFromProto(rq.GetHeader())
	}
	if pc.GetHasResponse() {
		c.RespHeader = abkitv1.HeaderFromProto(pc.GetResponseHeader())
	}
	c.Identity = string(pc.GetIdentityJson())
	s := p.s
	s.mu.Lock()
	if c.Hook == "frame" {
		c.Frame = string(pc.GetFrame())
		c.FrameIndex = p.frames[c.Exchange]
		if !c.Last {
			p.frames[c.Exchange]++
		}
	}
	c.Seq = len(s.calls)
	s.calls = append(s.calls, c)
	s.mu.Unlock()
	var r *abkitv1.ProbeReply
	if p.script != nil {
		r = p.script(&c)
	}
	if r == nil {
		r = &abkitv1.ProbeReply{}
	}
	if c.Hook == "intercept" && r.Decision == "" {
		r.Decision = "continue" // the neutral answer; an empty decision is a D9 violation
	}
	s.mu.Lock()
	s.calls[c.Seq].Reply = r
	s.mu.Unlock()
	return r, nil
}

// Reply helpers for scripts.

func reject(status int32, reason string) *abkitv1.ProbeReply {
	return &abkitv1.ProbeReply{Action: &abkitv1.Action{Kind: "reject", Status: status, Reason: reason}}
}

// on returns a script answering r at the given hook (and frame index, for
// frames; -1 for any) and nil elsewhere.
func on(hook string, frame int, r *abkitv1.ProbeReply) Script {
	return func(c *Call) *abkitv1.ProbeReply {
		if c.Hook == hook && (frame < 0 || (c.Hook == "frame" && !c.Last && c.FrameIndex == frame)) {
			return r
		}
		return nil
	}
}
