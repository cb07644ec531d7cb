package record

import (
	"fmt"
	"os"
	"time"

	"github.com/abkit/abkit/internal/replay/fixture"
)

// DefaultMemory is how many body bytes a proxy holds in memory across all
// exchanges in flight; past it, an exchange's body goes to a temporary
// file in the output directory.
const DefaultMemory = 64 << 20

// spool keeps one exchange's response body for its fixture: in memory
// while the proxy's shared budget allows, then in a temporary file, so
// ten concurrent 30 MiB streams do not hold 300 MiB.
type spool struct {
	p      *Proxy
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
	s.held, s.mem = 0, nil
}

// chunks returns the body as recorded chunks, reading a spilled one back.
func (s *spool) fixtureChunks() ([]fixture.Chunk, error) {
	data := s.mem
	if s.file != nil {
		data = make([]byte, s.n)
		if _, err := s.file.ReadAt(data, 0); err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
	}
	out := make([]fixture.Chunk, len(s.chunks))
	for i, c := range s.chunks {
		out[i] = fixture.Chunk{At: c.at, Data: data[c.off : c.off+c.len : c.off+c.len]}
	}
	return out, nil
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
