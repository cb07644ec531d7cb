package live

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abkit/abkit/internal/trace"
)

// Bounds of the event log all /v1/events subscribers read from
// (docs/live.md). A subscriber keeps only its place in the log, so a
// slow or stalled one costs no memory of its own: one that falls so far
// behind that its next event left the log is cut with an overflow event,
// and one whose writes stall for Options.EventWriteTimeout is cut.
const (
	// EventLogLen is how many events the log keeps.
	EventLogLen = 65536
	// EventLogBytes bounds the data bytes of the events the log keeps.
	EventLogBytes = 32 << 20
	// DefaultEventWriteTimeout is how long one write to a subscriber may
	// block (a subscriber that reads nothing for that long is cut).
	DefaultEventWriteTimeout = 10 * time.Second
)

// startedEvent is the data of an exchange_started event.
type startedEvent struct {
	ID      uint64    `json:"id"`
	Started time.Time `json:"started"`
	Method  string    `json:"method"`
	Path    string    `json:"path"`
}

// traceEvent is the data of a trace event: one hook call of an exchange.
type traceEvent struct {
	Exchange uint64      `json:"exchange"`
	Event    trace.Event `json:"event"`
}

// message is one server-sent event.
type message struct {
	id   uint64
	name string
	data []byte
}

// subscriber is one /v1/events client: its place in the log.
type subscriber struct {
	wake chan struct{} // a new event or the end; capacity 1
	next uint64        // id of the next event it gets
}

// broker keeps the last events in a log that every /v1/events
// subscriber reads at its own pace. Events get ids in the order they are
// published, and every subscriber receives them in that order.
type broker struct {
	n        atomic.Int32 // subscribers, read without the lock on the hot path
	mu       sync.Mutex
	seq      uint64    // id of the last event published
	log      []message // ring: event id i is at (i-1) % len(log)
	kept     int       // events in the log: ids seq-kept+1 ... seq
	bytes    int       // their data bytes
	maxLen   int
	maxBytes int
	subs     map[*subscriber]struct{}
	closed   bool
}

func newBroker() *broker { return newBrokerSized(EventLogLen, EventLogBytes) }

func newBrokerSized(n, bytes int) *broker {
	return &broker{subs: map[*subscriber]struct{}{}, maxLen: n, maxBytes: bytes}
}

// active reports whether anyone listens, so exchanges skip encoding
// events nobody reads.
func (b *broker) active() bool { return b.n.Load() > 0 }

// subscribe adds a subscriber whose first event is the one after
// lastID, or, with lastID 0, the next one published.
func (b *broker) subscribe(lastID uint64) (*subscriber, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false
	}
	s := &subscriber{wake: make(chan struct{}, 1), next: b.seq + 1}
	if lastID > 0 && lastID < b.seq {
		s.next = lastID + 1
		s.wake <- struct{}{}
	}
	b.subs[s] = struct{}{}
	b.n.Add(1)
	return s, true
}

// unsubscribe removes s. When the last subscriber goes, the log is let
// go: nobody reads it.
func (b *broker) unsubscribe(s *subscriber) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[s]; ok {
		delete(b.subs, s)
		b.n.Add(-1)
	}
	if len(b.subs) == 0 {
		b.log, b.kept, b.bytes = nil, 0, 0
	}
}

// evict drops the oldest event of the log.
func (b *broker) evict() {
	i := int((b.seq - uint64(b.kept)) % uint64(len(b.log))) // the oldest: id seq-kept+1
	b.bytes -= len(b.log[i].data)
	b.log[i] = message{}
	b.kept--
}

func (b *broker) publish(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return // the event types always encode
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.subs) == 0 {
		return
	}
	if b.log == nil {
		b.log = make([]message, b.maxLen)
	}
	if b.kept == len(b.log) {
		b.evict()
	}
	for b.kept > 0 && b.bytes+len(data) > b.maxBytes {
		b.evict()
	}
	b.seq++
	b.log[(b.seq-1)%uint64(len(b.log))] = message{id: b.seq, name: name, data: data}
	b.kept++
	b.bytes += len(data)
	for s := range b.subs {
		select {
		case s.wake <- struct{}{}:
		default: // already woken
		}
	}
}

// read appends to dst the events s has not had yet, from the oldest,
// up to about maxBytes of data, and moves s on. missed counts the events
// s should have had next that already left the log; done says the
// broker is closed and s has everything.
func (b *broker) read(s *subscriber, dst []message, maxBytes int) (out []message, missed uint64, done bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	oldest := b.seq - uint64(b.kept) + 1
	if s.next < oldest {
		missed = oldest - s.next
		s.next = oldest
	}
	n := 0
	for ; s.next <= b.seq && n < maxBytes; s.next++ {
		m := b.log[(s.next-1)%uint64(len(b.log))]
		dst = append(dst, m)
		n += len(m.data)
	}
	if s.next <= b.seq { // more left: come back without waiting
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return dst, missed, b.closed && s.next > b.seq
}

// close ends every subscription once it has read what is left; later
// subscriptions are refused.
func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}
