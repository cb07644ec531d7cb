package record

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/replay/fixture"
)

// The fixture pipeline. A finished exchange is queued by its handler
// (enqueue); at most Writers encoders take exchanges off the queue and
// redact and marshal each (encode); the writer writes each encoded
// fixture to an unnamed file in the output directory (writeLoop); the
// namer takes every file written so far, makes them durable with one sync
// of the file system and then names each (nameLoop). All file-system work
// is the writer's and the namer's, one operation at a time each: two
// encoders creating files at once in one directory spent more CPU in the
// kernel than either alone. Encoders, writer and namer are goroutines
// started when there is work and ending when there is none, so an idle
// proxy runs none and Wait covers them.
//
// Nothing is lost: an exchange counts in Wait from its queueing to its
// link, so a SIGINT that stops the server drains the queue before abctl
// exits. Durability: a file is linked only after a sync that started
// after it was written, so no name ever points at missing data.

// job is a finished exchange waiting for its fixture.
type job struct {
	r          *http.Request
	reqHeader  http.Header // r's header as forwarded (stripHop), which the fixture keeps
	name       func(string) string
	target     *url.URL
	rq, sp     *spool
	status     int
	respHeader http.Header
	started    time.Time
	size       int
}

// encoded is a fixture waiting for its file, its sync and its name.
type encoded struct {
	data   []byte
	buf    *bytes.Buffer // data's buffer, from marshalBufs
	tmp    *fixture.Temp
	name   func(string) string
	status int
	size   int
}

// enqueue hands a finished exchange to the pipeline. It waits while the
// queue is full (QueueLen).
func (p *Proxy) enqueue(j *job) {
	p.inflight.Add(1)
	p.qmu.Lock()
	for len(p.queue) >= p.queueLen {
		p.qroom.Wait()
	}
	p.queue = append(p.queue, j)
	if p.encoders < Writers {
		p.encoders++
		go p.encodeLoop()
	}
	p.qmu.Unlock()
}

// encodeLoop encodes queued exchanges until the queue is empty.
func (p *Proxy) encodeLoop() {
	for {
		p.qmu.Lock()
		if len(p.queue) == 0 {
			p.encoders--
			p.qmu.Unlock()
			return
		}
		j := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.qroom.Signal()
		p.qmu.Unlock()
		if e := p.encode(j); e != nil {
			p.link(e)
		} else {
			p.inflight.Done()
		}
		p.qmu.Lock()
		behind := len(p.queue) >= yieldBelow
		p.qmu.Unlock()
		// Relays first while the fixtures keep up: an encoder that goes on
		// at once takes a processor from the exchanges in flight, and
		// yielding puts it behind the goroutines ready to run. Behind, it
		// goes on: each yield waited for every ready goroutine (the global
		// run queue), which held one encoder to about 1,000 fixtures a
		// second under load (make bench-live), the queue filled and every
		// handler waited for room, which is slower for the relays too.
		if !behind {
			runtime.Gosched()
		}
	}
}

// yieldBelow is the queue length under which an encoder yields between
// fixtures.
const yieldBelow = 32

// encode builds, redacts and marshals j's fixture; nil when the exchange
// cannot be recorded (logged).
func (p *Proxy) encode(j *job) *encoded {
	defer j.sp.close()
	defer j.rq.close()
	if j.rq.file != nil || j.sp.file != nil || j.rq.n+j.sp.n > bigExchange {
		// A spilled or large body comes back into memory to be encoded
		// (which costs a few times its size): one at a time, so large
		// exchanges cost one encoding, not all.
		p.bigWrite <- struct{}{}
		defer func() { <-p.bigWrite }()
	}
	if p.writeGate != nil {
		p.writeGate()
	}
	chunks, body, err := j.sp.fixtureChunks()
	if err != nil {
		p.lostOne("err", err)
		return nil
	}
	reqBody, err := j.rq.bytes()
	if err != nil {
		p.lostOne("err", err)
		return nil
	}
	f := newFixture(p.source, j.started, j.r.Method, j.target.String(), j.reqHeader, reqBody, j.status, j.respHeader, chunks, body)
	buf := marshalBufs.Get().(*bytes.Buffer)
	buf.Reset()
	if err := fixture.MarshalTo(buf, f); err != nil {
		marshalBufs.Put(buf)
		p.lostOne("err", err)
		return nil
	}
	return &encoded{data: buf.Bytes(), buf: buf, name: j.name, status: j.status, size: j.size}
}

// marshalBufs holds the buffers fixtures are encoded into, back once the
// writer has written them: one per fixture in the pipeline rather than
// one allocated (and zeroed) of each fixture's size.
var marshalBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuf is the largest buffer put back in a pool: a rare large
// fixture's buffer is left to the collector, not kept.
const maxPooledBuf = 1 << 20

// release gives e's buffer back once its data is written.
func (e *encoded) release() {
	if e.buf != nil && e.buf.Cap() <= maxPooledBuf {
		marshalBufs.Put(e.buf)
	}
	e.buf, e.data = nil, nil
}

// maxUnnamed bounds the written files waiting for their sync and name,
// and so the descriptors open at once (twice it: a batch being named and
// the next one).
const maxUnnamed = 512

// link hands an encoded fixture to the writer. It waits while QueueLen
// fixtures wait for it.
func (p *Proxy) link(e *encoded) {
	p.qmu.Lock()
	for len(p.linkq) >= p.queueLen {
		p.lroom.Wait()
	}
	p.linkq = append(p.linkq, e)
	if !p.writing {
		p.writing = true
		go p.writeLoop()
	}
	p.qmu.Unlock()
}

// writeLoop writes each encoded fixture to an unnamed file and hands it
// to the namer, until none is waiting.
//
// Writing and naming are two goroutines so that files are written while
// the namer waits for a sync: a sync of a file system other programs
// write to took 30–260 ms under load (make bench-live), and one
// goroutine that wrote, synced and named each batch in turn kept the
// queue full. One each: several linking into one directory at once wait
// for its lock, and a thread that sleeps on a loaded machine waits
// milliseconds to run again (four linkers took up to a second to name 32
// files).
func (p *Proxy) writeLoop() {
	for {
		p.qmu.Lock()
		for len(p.nameq) >= maxUnnamed {
			p.nroom.Wait()
		}
		if len(p.linkq) == 0 {
			p.writing = false
			p.qmu.Unlock()
			return
		}
		e := p.linkq[0]
		p.linkq[0] = nil
		p.linkq = p.linkq[1:]
		p.lroom.Signal()
		p.qmu.Unlock()
		// Unsynced where the namer's sync covers the file; elsewhere
		// each file is synced as it is written.
		tmp, err := fixture.NewTemp(p.out, e.data, !groupSync)
		e.release()
		if err != nil {
			p.lostOne("err", err)
			p.inflight.Done()
			continue
		}
		e.tmp = tmp
		p.qmu.Lock()
		p.nameq = append(p.nameq, e)
		if !p.naming {
			p.naming = true
			go p.nameLoop()
		}
		p.qmu.Unlock()
	}
}

// nameLoop makes every written file durable with one sync and names
// them, until none is waiting. Fifty fixtures finishing together cost
// one or two syncs rather than fifty fsyncs, which took more CPU than
// relaying the exchanges (BenchmarkRecordLoad).
func (p *Proxy) nameLoop() {
	for {
		p.qmu.Lock()
		if len(p.nameq) == 0 {
			p.naming = false
			p.qmu.Unlock()
			return
		}
		batch := p.nameq
		p.nameq = nil
		p.nroom.Broadcast()
		p.qmu.Unlock()
		// Every file in batch was written before this sync starts.
		err := p.syncs.wait(p.out)
		if err != nil {
			err = fmt.Errorf("sync %s: %w", p.out, err)
		}
		for _, e := range batch {
			p.name(e, err)
			p.inflight.Done()
		}
	}
}

// name links one durable file under its fixture name, or drops it when
// its sync failed.
func (p *Proxy) name(e *encoded, syncErr error) {
	if syncErr != nil {
		e.tmp.Discard()
		p.lostOne("err", syncErr)
		return
	}
	file, err := e.tmp.Link(e.name)
	if err != nil {
		p.lostOne("err", err)
		return
	}
	p.mu.Lock()
	p.written = append(p.written, file)
	p.mu.Unlock()
	p.log.Info("recorded", "file", file, "status", e.status, "bytes", e.size)
}
