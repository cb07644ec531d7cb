// Package limits bounds what abkit reads from untrusted input: the size of
// every file, the structure of YAML and JSON documents (nesting depth,
// alias expansion, node count) and where derived file names may point.
// Each bound is checked before the expensive work it protects (reading,
// expanding, allocating), so a small hostile file cannot exhaust memory.
// docs/limits.md lists every bound; a bound that is hit is an [*Error]
// naming it and what to do, which abctl and conformance exit 3 on.
package limits

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// The bounds. docs/limits.md is the table users read; keep them in step.
const (
	// ChainFile is the largest chain file read.
	ChainFile = 1 << 20
	// CatalogFile is the largest catalog file (file: source) read, and
	// the largest YAML or JSON document the strict decoder accepts.
	CatalogFile = 4 << 20
	// HARFile is the largest HAR export imported: 64 MiB of bodies is two
	// fixtures' worth; larger captures are split per page in the browser.
	HARFile = 64 << 20
	// URLBody is the default bound on a url: catalog answer.
	URLBody = 4 << 20
	// Baseline is the largest conformance baseline or reattach file read.
	Baseline = 16 << 20

	// YAMLDepth is the deepest nesting of mappings and sequences in a
	// YAML document (block and flow alike).
	YAMLDepth = 100
	// YAMLNodes bounds the nodes of a YAML document after its aliases are
	// expanded: the defence against "billion laughs" alias bombs. It is
	// checked on the parsed tree, before anything is expanded.
	YAMLNodes = 200_000
	// YAMLTokens bounds the tokens a YAML document may hold, estimated
	// from its bytes before the parser allocates one object per token.
	YAMLTokens = 400_000
	// JSONDepth is the deepest nesting of objects and arrays in a JSON
	// document abkit parses from input (HAR exports, baselines).
	JSONDepth = 200
)

// Error is a bound that input hit. abctl and conformance exit 3 on it.
type Error struct {
	// File names the input: a path, a source spec or a URL.
	File string
	// Limit names the bound, as docs/limits.md does ("chain file size").
	Limit string
	// Max is the bound; Got what the input had, or -1 when only "more"
	// is known (an endless stream stops being read at Max+1).
	Max, Got int64
	// Unit prints Max and Got: "bytes" prints sizes as KiB/MiB.
	Unit string
	// Fix says how to get under the bound.
	Fix string
	// Detail, when set, replaces the "is N, over the limit of M" phrase.
	Detail string
}

func (e *Error) Error() string {
	if e.Detail != "" {
		msg := fmt.Sprintf("%s: %s (%s; docs/limits.md)", e.File, e.Detail, e.Limit)
		if e.Fix != "" {
			msg += "; " + e.Fix
		}
		return msg
	}
	got := "over"
	if e.Got >= 0 {
		got = e.format(e.Got) + ", over"
	}
	msg := fmt.Sprintf("%s: %s %s the limit of %s (docs/limits.md)", e.File, e.Limit, gotPhrase(got), e.format(e.Max))
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

func gotPhrase(got string) string {
	if got == "over" {
		return "is over"
	}
	return "is " + got
}

func (e *Error) format(n int64) string {
	if e.Unit == "bytes" {
		return Bytes(n)
	}
	if e.Unit == "" {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d %s", n, e.Unit)
}

// Bytes prints a size as people read it: 1 MiB, 64 KiB, 300 bytes.
func Bytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Is reports whether err is or wraps an *Error.
func Is(err error) bool {
	var le *Error
	return errors.As(err, &le)
}

// ErrNotFile is a path that names a directory where a file was wanted.
var ErrNotFile = errors.New("is a directory, not a file")

// ReadFile reads path whole, refusing more than max bytes: a regular
// file's size is checked first, and whatever it is (a pipe, /dev/zero, a
// file still growing) no more than max+1 bytes are ever read; /dev/null
// reads as empty. what names the bound
// for the error ("chain file size"), fix says what to do about it.
func ReadFile(path, what string, max int64, fix string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &os.PathError{Op: "read", Path: path, Err: ErrNotFile}
	}
	if st.Mode().IsRegular() {
		if st.Size() > max {
			return nil, &Error{File: path, Limit: what, Max: max, Got: st.Size(), Unit: "bytes", Fix: fix}
		}
		// Read into one buffer of the right size rather than doubling
		// one up to it: a file near the limit costs its size, not 3x.
		var b bytes.Buffer
		b.Grow(int(st.Size()) + bytes.MinRead + 1)
		if _, err := b.ReadFrom(io.LimitReader(fh, max+1)); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if int64(b.Len()) > max { // it grew while we read
			return nil, &Error{File: path, Limit: what, Max: max, Got: -1, Unit: "bytes", Fix: fix}
		}
		return b.Bytes(), nil
	}
	return ReadAll(fh, path, what, max, fix)
}

// ReadAll reads r to its end, refusing more than max bytes (it reads at
// most max+1). It reads in 1 MiB pieces and joins them once, so an input
// near the limit costs about twice its size, not the three times a
// doubling buffer would.
func ReadAll(r io.Reader, name, what string, max int64, fix string) ([]byte, error) {
	const piece = 1 << 20
	lr := io.LimitReader(r, max+1)
	var parts [][]byte
	var n int64
	for {
		buf := make([]byte, piece)
		m, err := io.ReadFull(lr, buf)
		if m > 0 {
			parts = append(parts, buf[:m])
			n += int64(m)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	if n > max {
		return nil, &Error{File: name, Limit: what, Max: max, Got: -1, Unit: "bytes", Fix: fix}
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}
