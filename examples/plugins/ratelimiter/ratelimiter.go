// Package ratelimiter is the rate-limiter example plugin. It shows the
// reserve-in-OnRequest, release-in-OnFinish pattern: OnRequest takes a slot
// and stores it as typed per-exchange state ([P31]); OnFinish, which runs on
// every plugin whose OnRequest ran, whatever the outcome (P26), gives it
// back. Over the limit it rejects with 429.
//
// Without a window the limit bounds the exchanges in flight. With a window
// it bounds the exchanges admitted in any sliding window of that length; a
// slot is then released early only when a later plugin denied the exchange
// (the upstream never saw it), otherwise it ages out with the window.
//
// [P31]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package ratelimiter

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
)

// Name is the plugin's registered name.
const Name = "rate-limiter"

// Description is the one-line catalog description (P5).
const Description = "Limits concurrent or per-window exchanges, per client header; 429 over it"

// Config is the plugin's configuration block.
type Config struct {
	Limit int `json:"limit"`
	// Window is a duration string ("1m"); empty limits concurrency.
	Window string `json:"window,omitempty"`
	// KeyHeader names a request header whose value picks the bucket; empty
	// means one bucket for all traffic. A missing header is its own bucket.
	KeyHeader string `json:"key_header,omitempty"`
}

var schema = &gateway.ConfigSchema{Fields: []gateway.Field{
	{Name: "limit", Type: "integer", Required: true, Description: "Exchanges allowed at once, or per window when window is set"},
	{Name: "window", Type: "duration", Description: "Sliding window such as \"1m\"; unset limits concurrency instead"},
	{Name: "key_header", Type: "string", Description: "Request header whose value selects a separate limit per client"},
}}

// Schema returns the configuration schema.
func Schema() *gateway.ConfigSchema { return schema }

// Factory registers the plugin.
func Factory() gateway.Factory {
	return config.Factory(Name, schema, func(c Config) (*Limiter, error) { return New(c, nil) })
}

// Limiter is a rate-limiter instance, safe for concurrent exchanges.
type Limiter struct {
	limit     int
	window    time.Duration
	keyHeader string
	now       func() time.Time
	key       gateway.Key[*reservation]

	mu       sync.Mutex
	inflight map[string]int         // concurrency mode
	admitted map[string][]time.Time // window mode: admission times, oldest first
	sweeps   int
}

// reservation is the slot an exchange holds, stored as exchange state.
type reservation struct {
	bucket string
	at     time.Time
}

// New makes an instance. now is the clock; nil means time.Now.
func New(c Config, now func() time.Time) (*Limiter, error) {
	if c.Limit < 1 {
		return nil, fmt.Errorf("%s config: field \"limit\": %d is not a positive integer", Name, c.Limit)
	}
	window, err := config.Duration(Name, "window", c.Window, 0)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Limiter{
		limit: c.Limit, window: window, keyHeader: c.KeyHeader, now: now,
		key:      gateway.NewKey[*reservation](Name),
		inflight: map[string]int{}, admitted: map[string][]time.Time{},
	}, nil
}

var _ gateway.Finisher = (*Limiter)(nil)

// Name returns "rate-limiter".
func (*Limiter) Name() string { return Name }

// Capabilities: none beyond the description.
func (*Limiter) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: Description}
}

func (p *Limiter) bucket(ex *gateway.Exchange) string {
	if p.keyHeader == "" {
		return ""
	}
	return ex.Request.Header.Get(p.keyHeader)
}

// OnRequest reserves a slot or rejects with 429.
func (p *Limiter) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	b := p.bucket(ex)
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.window == 0 {
		if p.inflight[b] >= p.limit {
			return gateway.Reject(429, fmt.Sprintf("rate limit reached: %d exchanges in flight%s", p.limit, p.forKey(b)))
		}
		p.inflight[b]++
	} else {
		log := p.prune(b, now)
		if len(log) >= p.limit {
			retry := log[0].Add(p.window).Sub(now)
			// Retry-After tells the client when the oldest admission
			// leaves the window (P34).
			return gateway.RateLimited(retry, fmt.Sprintf("rate limit reached: %d exchanges per %s%s; retry in %s", p.limit, p.window, p.forKey(b), retry.Round(time.Millisecond)))
		}
		p.admitted[b] = append(log, now)
		p.sweep(now)
	}
	gateway.SetState(ex, p.key, &reservation{bucket: b, at: now})
	return gateway.Continue()
}

// forKey names the bucket in a rejection's reason without its key: the
// key header is often a credential (X-Api-Key), and reasons reach traces,
// the live API and logs. A short fingerprint still tells buckets apart.
func (p *Limiter) forKey(b string) string {
	if p.keyHeader == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(b))
	return fmt.Sprintf(" for %s #%x", p.keyHeader, sum[:4])
}

// prune drops admissions older than the window; p.mu is held.
func (p *Limiter) prune(b string, now time.Time) []time.Time {
	log := p.admitted[b]
	i := 0
	for i < len(log) && !log[i].After(now.Add(-p.window)) {
		i++
	}
	log = log[i:]
	if len(log) == 0 {
		delete(p.admitted, b)
		return nil
	}
	p.admitted[b] = log
	return log
}

// sweep prunes every bucket now and then so that clients that went away
// do not keep memory; p.mu is held.
func (p *Limiter) sweep(now time.Time) {
	if p.sweeps++; p.sweeps%1024 != 0 {
		return
	}
	for b := range p.admitted {
		p.prune(b, now)
	}
}

// OnResponse does nothing.
func (*Limiter) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// OnFinish releases the exchange's slot, if it took one. An exchange this
// plugin rejected holds none.
func (p *Limiter) OnFinish(_ context.Context, ex *gateway.Exchange) error {
	r, ok := gateway.GetState(ex, p.key)
	if !ok || r == nil {
		return nil
	}
	// Clear the state first so that a second finish cannot release twice.
	gateway.SetState[*reservation](ex, p.key, nil)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.window == 0 {
		if p.inflight[r.bucket]--; p.inflight[r.bucket] <= 0 {
			delete(p.inflight, r.bucket)
		}
		return nil
	}
	// Refund a slot the upstream never used: a later plugin denied it.
	if o, ok := ex.Outcome(); ok && o.Kind == gateway.OutcomeDeny && o.DeniedBy != Name {
		log := p.admitted[r.bucket]
		for i := len(log) - 1; i >= 0; i-- {
			if log[i].Equal(r.at) {
				p.admitted[r.bucket] = append(log[:i:i], log[i+1:]...)
				break
			}
		}
	}
	return nil
}

// InFlight returns the slots in use for a bucket ("" without key_header):
// exchanges in flight, or admissions in the current window.
func (p *Limiter) InFlight(bucket string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.window == 0 {
		return p.inflight[bucket]
	}
	return len(p.prune(bucket, p.now()))
}

// Plugin bundles the factory for the catalog and for serving as a binary.
func Plugin() sdk.Plugin {
	f := Factory()
	return sdk.Plugin{Name: Name, Description: Description, Pipeline: &f}
}
