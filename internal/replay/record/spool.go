package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/replay/fixture"
)

// DefaultMemory is how many body bytes a proxy holds in memory across all
// exchanges in flight; past it, an exchange's body goes to a temporary
// file in the output directory.
const DefaultMemory = 64 << 20

// copyBufs holds the 32 KiB buffers bodies are relayed through: one per
// exchange in flight rather than two allocated (and zeroed) for each.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// bigExchange is the body size (request and response together) past
// which an exchange is encoded only while no other large one is.
const bigExchange = 4 << 20

// spool keeps one exchange's request or response body for its fixture: in memory
// while the proxy's shared budget allows, then in a temporary file, so
// ten concurrent 30 MiB streams do not hold 300 MiB.
type spool struct {
	p *Proxy
	// pooled: mem comes from and goes back to memBufs. Only for a
	// response: nothing reads its memory after the fixture is encoded,
	// where a request's is the forwarded body's.
	pooled bool
	mem    []byte
	held   int64 // bytes of the budget this spool holds
	file   *os.File
	n      int64
	chunks []span
}

type span struct {
	at       time.Duration
	off, len int64
}

func (s *spool) write(at time.Duration, b []byte) error {
	s.chunks = append(s.chunks, span{at: at, off: s.n, len: int64(len(b))})
	s.n += int64(len(b))
	if s.file == nil {
		if held := s.p.held.Add(int64(len(b))); held <= s.p.memory {
			s.p.noteHeld(held)
			if s.mem == nil && s.pooled {
				s.mem = (*memBufs.Get().(*[]byte))[:0]
			}
			s.mem = append(s.mem, b...)
			s.held += int64(len(b))
			return nil
		}
		s.p.held.Add(-int64(len(b)))
		f, err := os.CreateTemp(s.p.out, ".spool-*")
		if err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		s.file = f
		if runtime.GOOS != "windows" {
			// Unlinked at once: the open file keeps its data, and a
			// recorder killed with SIGKILL leaves no .spool-* behind
			// (Windows cannot remove an open file; close removes it).
			os.Remove(f.Name())
		}
		s.p.spilled.Add(1)
		if _, err := f.Write(s.mem); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		s.release()
	}
	if _, err := s.file.Write(b); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

func (s *spool) release() {
	s.p.held.Add(-s.held)
	if s.pooled && s.mem != nil && cap(s.mem) <= maxPooledBuf {
		m := s.mem[:0]
		memBufs.Put(&m)
	}
	s.held, s.mem = 0, nil
}

// memBufs holds response bodies' memory: a 27 KB stream grew its body
// from empty through four allocations and copies for every exchange.
var memBufs = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// fixtureChunks returns the body as recorded chunks, reading a spilled
// one back, and the whole body they are cut from (nil when empty); both
// are valid until close.
func (s *spool) fixtureChunks() ([]fixture.Chunk, []byte, error) {
	data := s.mem
	if s.file != nil {
		data = make([]byte, s.n)
		if _, err := s.file.ReadAt(data, 0); err != nil {
			return nil, nil, fmt.Errorf("spool: %w", err)
		}
	}
	out := make([]fixture.Chunk, len(s.chunks))
	for i, c := range s.chunks {
		out[i] = fixture.Chunk{At: c.at, Data: data[c.off : c.off+c.len : c.off+c.len]}
	}
	if s.n == 0 {
		return out, nil, nil
	}
	return out, data[:s.n:s.n], nil
}

// readFrom reads r into the spool, at most max bytes, and returns how
// many it read.
func (s *spool) readFrom(r io.Reader, max int64) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	lr := io.LimitReader(r, max)
	for {
		n, err := lr.Read(buf)
		if n > 0 {
			if werr := s.write(0, buf[:n]); werr != nil {
				return s.n, werr
			}
		}
		if errors.Is(err, io.EOF) {
			return s.n, nil
		}
		if err != nil {
			return s.n, err
		}
	}
}

// reader reads the spooled body from its start; it is valid until close.
// It is an *io.SectionReader or *bytes.Reader, so an http.Request made
// with it knows its length.
func (s *spool) reader() io.Reader {
	if s.file != nil {
		return io.NewSectionReader(s.file, 0, s.n)
	}
	return bytes.NewReader(s.mem)
}

// bytes returns the whole spooled body, reading a spilled one back; nil
// for an empty body.
func (s *spool) bytes() ([]byte, error) {
	if s.n == 0 {
		return nil, nil
	}
	if s.file == nil {
		return s.mem, nil
	}
	data := make([]byte, s.n)
	if _, err := s.file.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return data, nil
}

// close frees the budget and removes the temporary file.
func (s *spool) close() {
	s.release()
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
		s.file = nil
	}
}

// noteHeld keeps the largest budget use seen, for tests and logs.
func (p *Proxy) noteHeld(n int64) {
	for {
		m := p.maxHeld.Load()
		if n <= m || p.maxHeld.CompareAndSwap(m, n) {
			return
		}
	}
}
