package live

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abkit/abkit/internal/trace"
)

// SubscriberBuffer is how many events a /v1/events client may fall behind
// before it is disconnected (with an overflow event): a slow reader must
// not hold memory or slow the exchanges down.
const SubscriberBuffer = 4096

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

type subscriber struct {
	ch       chan message
	overflow bool
}

// broker fans events out to the /v1/events subscribers. Events get ids in
// the order they are published, and every subscriber receives them in
// that order.
type broker struct {
	n      atomic.Int32 // subscribers, read without the lock on the hot path
	mu     sync.Mutex
	seq    uint64
	subs   map[*subscriber]struct{}
	closed bool
}

func newBroker() *broker { return &broker{subs: map[*subscriber]struct{}{}} }

// active reports whether anyone listens, so exchanges skip encoding
// events nobody reads.
func (b *broker) active() bool { return b.n.Load() > 0 }

func (b *broker) subscribe() (*subscriber, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false
	}
	s := &subscriber{ch: make(chan message, SubscriberBuffer)}
	b.subs[s] = struct{}{}
	b.n.Add(1)
	return s, true
}

func (b *broker) unsubscribe(s *subscriber) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[s]; ok {
		delete(b.subs, s)
		b.n.Add(-1)
		close(s.ch)
	}
}

func (b *broker) publish(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return // the event types always encode
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	m := message{id: b.seq, name: name, data: data}
	for s := range b.subs {
		select {
		case s.ch <- m:
		default:
			s.overflow = true
			delete(b.subs, s)
			b.n.Add(-1)
			close(s.ch)
		}
	}
}

// close ends every subscription; later subscriptions are refused.
func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		delete(b.subs, s)
		b.n.Add(-1)
		close(s.ch)
	}
}
