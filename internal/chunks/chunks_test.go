package chunks

import (
	"context"
	"errors"
	"io"
	"testing"
)

func drain(t *testing.T, s *Stream) ([]string, error) {
	t.Helper()
	var out []string
	for {
		b, err := s.Next(context.Background())
		if err != nil {
			return out, err
		}
		out = append(out, string(b))
	}
}

func TestStream(t *testing.T) {
	got, err := drain(t, New([][]byte{[]byte("a"), []byte("bc")}))
	if err != io.EOF || len(got) != 2 || got[0] != "a" || got[1] != "bc" {
		t.Errorf("got %q, %v; want [a bc], EOF", got, err)
	}
	early := errors.New("reset")
	s := New([][]byte{[]byte("a")})
	s.End = early
	if _, err := drain(t, s); err != early {
		t.Errorf("End: got %v, want %v", err, early)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New([][]byte{[]byte("a")}).Next(ctx); err != context.Canceled {
		t.Errorf("cancelled ctx: got %v", err)
	}
}

func TestStreamReuseAndCopy(t *testing.T) {
	held := [][]byte{[]byte("ab"), []byte("cd")}
	s := New(held)
	s.Reuse = true
	first, _ := s.Next(context.Background())
	kept := first[:2]
	s.Next(context.Background())
	if string(kept) != "cd" {
		t.Errorf("Reuse: the first chunk's bytes are %q after the next call, want the buffer reused (cd)", kept)
	}
	s.Next(context.Background())
	if kept[0] != 0xDB {
		t.Errorf("Reuse: buffer not overwritten at the end: %q", kept)
	}
	c := New(held)
	c.Copy = true
	b, _ := c.Next(context.Background())
	b[0] = 'X'
	if string(held[0]) != "ab" {
		t.Errorf("Copy: the held chunk changed to %q", held[0])
	}
}
