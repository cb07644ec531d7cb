package conformance

import (
	"context"
	"sync"
)

// IsolationPool reuses subjects between cases: at most one per case running
// at once (Options.Parallel), each used by one case at a time. A subject is
// retired after a case that failed, overran its timeout, or during which
// the subject exited, so a fault stays with the case that found it and the
// next case starts on a fresh process. It suits subjects whose cases share
// no state through the process, as a runtime's scenarios (each builds its
// own chain, dispatcher or bus); starting a process per case would cost
// more than the cases (docs/conformance.md, timings).
const IsolationPool Isolation = "pool"

// pool hands out the subjects of pool isolation.
type pool struct {
	l Launcher

	mu     sync.Mutex
	idle   []Subject
	closed bool
}

func newPool(l Launcher, first Subject) *pool { return &pool{l: l, idle: []Subject{first}} }

// take returns an idle subject that is still running, or starts one.
func (p *pool) take(ctx context.Context) (Subject, error) {
	p.mu.Lock()
	for len(p.idle) > 0 {
		s := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if s.Exited() == nil {
			p.mu.Unlock()
			return s, nil
		}
		s.Close()
	}
	p.mu.Unlock()
	return p.l.Launch(ctx)
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
	p.idle = append(p.idle, s)
}

// close stops every idle subject.
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, s := range idle {
		s.Close()
	}
}
