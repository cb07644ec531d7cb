// Package chunks is the one in-memory upstream body of the pipeline
// runtime's Stream shape (internal/pipeline.Stream): chunks handed out in
// order. The dry-run of the TUI, replay, the conformance rig and the
// runtime kit's scripted upstream all use [Stream].
package chunks

import (
	"context"
	"io"
	"sync"
)

// Stream hands out its chunks in order, then End. It ignores time, so a
// replay runs as fast as the chain does. Like a real upstream body read,
// Next fails with ctx's error once ctx is done. Safe for concurrent use.
type Stream struct {
	// End is returned after the last chunk; nil means io.EOF. A stream
	// that ends early sets the error the host sees.
	End error
	// Copy hands each chunk as a fresh copy, so that what a plugin does to
	// it never reaches the chunks held.
	Copy bool
	// Reuse hands every chunk in one buffer that the next call overwrites
	// (with 0xDB before the new bytes), as a network read buffer is, so a
	// plugin that keeps frame bytes past its call sees other bytes (P24).
	Reuse bool

	mu     sync.Mutex
	chunks [][]byte
	i      int
	buf    []byte
}

// New returns a stream of chunks; the stream does not copy them.
func New(chunks [][]byte) *Stream { return &Stream{chunks: chunks} }

// Next returns the next chunk, valid until the following call with Reuse;
// End (io.EOF by default) after the last.
func (s *Stream) Next(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Reuse {
		for i := range s.buf {
			s.buf[i] = 0xDB
		}
	}
	if s.i >= len(s.chunks) {
		if s.End != nil {
			return nil, s.End
		}
		return nil, io.EOF
	}
	c := s.chunks[s.i]
	s.i++
	switch {
	case s.Reuse:
		s.buf = append(s.buf[:0], c...)
		c = s.buf
	case s.Copy:
		c = append([]byte(nil), c...)
	}
	return c, nil
}
