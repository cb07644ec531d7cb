// Package plugintest drives a family P plugin by hand in its author's unit
// tests, the way a host does: a [Run] is one exchange; Request, Response,
// Frames and Finish call the hooks in the host's order (OnRequest in chain
// order, the response hooks in reverse), enter each call as the host does
// (so the exchange enforces what the plugin's capabilities allow) and, like
// a conformance host ([P24]), overwrite every frame buffer after the call so
// that a plugin that keeps borrowed bytes is caught.
//
// It is for fast, focused tests of a plugin's logic. For the whole
// contract, run the conformance suite with sdk/conformancetest (in-process)
// or `conformance run --plugin BIN` (the built binary).
//
// [P24]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package plugintest

import (
	"context"
	"math/rand/v2"
	"net/http"

	"github.com/abkit/abkit/sdk/gateway"
)

// Run is one exchange driven by hand.
type Run struct {
	Ex  *gateway.Exchange
	Ctl *gateway.Control
}

// NewRun starts an inbound exchange with a request body (nil: not
// buffered). The request's parts (scheme, host, path, raw query; P35) come
// from url, as a host fills them; set Ex.Request.Host and the others to
// give other ones.
func NewRun(method, url string, body []byte) *Run {
	req := gateway.Request{Method: method, URL: url, Header: http.Header{}}
	req.FillTarget("")
	ex, ctl := gateway.NewExchange(gateway.Inbound, req)
	ctl.SetRequestBody(body)
	return &Run{Ex: ex, Ctl: ctl}
}

func (r *Run) enter(p gateway.Plugin, phase gateway.Phase) {
	c := p.Capabilities().Normalize()
	r.Ctl.Enter(p.Name(), phase, c.WritesRequestBody, c.WritesResponseBody)
}

// Request runs OnRequest on plugins in order and stops at the first
// rejection, returning it (P15).
func (r *Run) Request(ctx context.Context, plugins ...gateway.Plugin) gateway.Action {
	for _, p := range plugins {
		r.enter(p, gateway.PhaseRequest)
		if a := p.OnRequest(ctx, r.Ex); !a.IsContinue() {
			return a
		}
	}
	return gateway.Continue()
}

// Respond sets the upstream's status and content type.
func (r *Run) Respond(status int, contentType string) {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	r.Ctl.SetResponse(gateway.Response{Status: status, Header: h})
}

// Response runs OnResponse on plugins in reverse order over a buffered
// body (P16) and returns the first rejection.
func (r *Run) Response(ctx context.Context, body []byte, plugins ...gateway.Plugin) gateway.Action {
	r.Ctl.SetResponseBody(body)
	for i := len(plugins) - 1; i >= 0; i-- {
		r.enter(plugins[i], gateway.PhaseResponse)
		if a := plugins[i].OnResponse(ctx, r.Ex); !a.IsContinue() {
			return a
		}
	}
	return gateway.Continue()
}

// Frames delivers chunks to the streaming plugins, each chunk across
// plugins in reverse order (P20), then one last=true call with an empty
// frame (P21). Each chunk is lent in a scratch buffer that is overwritten
// after the call (P24). It stops at the first rejection (P25) and returns
// it with the index of the chunk (len(chunks) for the last call).
func (r *Run) Frames(ctx context.Context, chunks [][]byte, plugins ...gateway.Plugin) (gateway.Action, int) {
	var scratch []byte
	for i := 0; i <= len(chunks); i++ {
		last := i == len(chunks)
		for j := len(plugins) - 1; j >= 0; j-- {
			s, ok := plugins[j].(gateway.StreamingResponder)
			if !ok {
				continue
			}
			// Each plugin is lent a fresh copy: the previous one's was
			// poisoned after its call.
			scratch = scratch[:0]
			if !last {
				scratch = append(scratch, chunks[i]...)
			}
			r.enter(plugins[j], gateway.PhaseFrame)
			a := s.OnResponseFrame(ctx, r.Ex, scratch, last)
			for k := range scratch {
				scratch[k] = 'X'
			}
			if !a.IsContinue() {
				return a, i
			}
		}
	}
	return gateway.Continue(), -1
}

// Finish makes the outcome available and runs OnFinish in reverse order
// (P27, P29); it returns the errors by plugin name.
func (r *Run) Finish(ctx context.Context, o gateway.Outcome, plugins ...gateway.Plugin) map[string]error {
	r.Ctl.SetOutcome(o)
	errs := map[string]error{}
	for i := len(plugins) - 1; i >= 0; i-- {
		f, ok := plugins[i].(gateway.Finisher)
		if !ok {
			continue
		}
		r.enter(plugins[i], gateway.PhaseFinish)
		if err := f.OnFinish(ctx, r.Ex); err != nil {
			errs[plugins[i].Name()] = err
		}
	}
	return errs
}

// Split cuts body into chunks of n bytes (the last may be shorter).
func Split(body []byte, n int) [][]byte {
	var out [][]byte
	for len(body) > n {
		out = append(out, body[:n])
		body = body[n:]
	}
	if len(body) > 0 {
		out = append(out, body)
	}
	return out
}

// SplitRandom cuts body at random points chosen by seed, leaving some
// chunks empty.
func SplitRandom(body []byte, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out [][]byte
	for len(body) > 0 {
		n := rng.IntN(min(len(body), 40) + 1)
		out = append(out, body[:n])
		body = body[n:]
	}
	return out
}

// New makes a plugin from a factory, failing the test on error.
func New(t interface {
	Helper()
	Fatalf(string, ...any)
}, f gateway.Factory, config string) gateway.Plugin {
	t.Helper()
	var raw []byte
	if config != "" {
		raw = []byte(config)
	}
	p, err := f.New(raw)
	if err != nil {
		t.Fatalf("%s: New(%s): %v", f.Name, config, err)
	}
	if p.Name() != f.Name {
		t.Fatalf("%s: instance reports name %q", f.Name, p.Name())
	}
	return p
}
