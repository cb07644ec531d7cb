package live

import "sync"

// ring keeps the last n finished exchanges, oldest first, and finds them
// by id. Memory is bounded by n exchanges with capped bodies.
type ring struct {
	mu   sync.Mutex
	buf  []*Exchange
	next int // where the next exchange goes
	full bool
	byID map[uint64]*Exchange
}

func newRing(n int) *ring {
	return &ring{buf: make([]*Exchange, n), byID: make(map[uint64]*Exchange, n)}
}

func (r *ring) add(ex *Exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.buf[r.next]; old != nil {
		delete(r.byID, old.ID)
	}
	r.buf[r.next] = ex
	r.byID[ex.ID] = ex
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
}

// summaries returns the kept exchanges' summaries, oldest first.
func (r *ring) summaries() []Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Summary, 0, len(r.byID))
	start := 0
	if r.full {
		start = r.next
	}
	for i := range len(r.buf) {
		if ex := r.buf[(start+i)%len(r.buf)]; ex != nil {
			out = append(out, ex.Summary)
		}
	}
	return out
}

// get returns a copy of the exchange with id (its summary copied, the
// rest shared and never changed after add).
func (r *ring) get(id uint64) (Exchange, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ex, ok := r.byID[id]
	if !ok {
		return Exchange{}, false
	}
	return *ex, true
}

// setFixture notes the file an exchange was recorded to.
func (r *ring) setFixture(id uint64, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ex, ok := r.byID[id]; ok {
		ex.Summary.Fixture = name
	}
}

// size returns the ring's capacity.
func (r *ring) size() int { return len(r.buf) }
