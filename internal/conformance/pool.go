package conformance

import (
	"context"
	"sync"
)

// IsolationPool reuses subjects between cases: at most one per case running
// at once (Options.Parallel), each used by one case at a time. A subject is
// retired after a case that failed, overran its timeout, or during which
// the subject exited, so a fault stays with the case that found it and the
// next case starts on a fresh process. A case that fails on a reused
// subject is run again on a fresh one, and that run is its verdict: what
// an earlier case left in the process (a rate limit's count, state it
// kept) can cost time but never decide a failure, so a run fails exactly
// the cases case isolation fails unless a case passes only because of an
// earlier one. It is the default of `conformance run` for plugins and
// runtimes: starting a process per case costs more than the cases, and
// an interpreted plugin's start is 100–150 ms (docs/perf.md).
const IsolationPool Isolation = "pool"

// pool hands out the subjects of pool isolation.
type pool struct {
	l Launcher

	mu     sync.Mutex
	idle   []pooled
	closed bool
}

// pooled is an idle subject; used is false for the one that only answered
// Describe.
type pooled struct {
	s    Subject
	used bool
}

func newPool(l Launcher, first Subject) *pool {
	return &pool{l: l, idle: []pooled{{s: first}}}
}

// take returns an idle subject that is still running, or starts one;
// reused says whether an earlier case ran on it.
func (p *pool) take(ctx context.Context) (s Subject, reused bool, err error) {
	p.mu.Lock()
	for len(p.idle) > 0 {
		x := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if x.s.Exited() == nil {
			p.mu.Unlock()
			return x.s, x.used, nil
		}
		x.s.Close()
	}
	p.mu.Unlock()
	s, err = p.l.Launch(ctx)
	return s, false, err
}

// put gives back a subject a case passed on; it is closed when the pool
// is.
func (p *pool) put(s Subject) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || s.Exited() != nil {
		s.Close()
		return
	}
	p.idle = append(p.idle, pooled{s: s, used: true})
}

// close stops every idle subject.
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, x := range idle {
		x.s.Close()
	}
}
