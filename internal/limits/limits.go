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
	"math"
	"os"
	"strconv"
	"strings"
)

// A Bound is one limit: its default, the environment variable that
// raises (or lowers) it, and how errors name it. The defaults sit one or
// two orders of magnitude above the largest real input we know of; an
// input that needs more is run with the variable set, for example
// ABKIT_MAX_HAR_FILE=512MiB abctl fixture import --har big.har.
type Bound struct {
	// Env is the environment variable that sets the bound: a count, or
	// for sizes a byte count with an optional KiB, MiB or GiB suffix.
	Env string
	// Default is the bound when Env is unset.
	Default int64
	// Unit is "bytes" for sizes, else what is counted ("levels").
	Unit string
}

// The bounds. docs/limits.md is the table users read; keep them in step.
var (
	// ChainFile is the largest chain file read.
	ChainFile = Bound{Env: "ABKIT_MAX_CHAIN_FILE", Default: 1 << 20, Unit: "bytes"}
	// CatalogFile is the largest catalog file (file: source) read, and
	// the largest YAML or JSON document the strict decoder accepts.
	CatalogFile = Bound{Env: "ABKIT_MAX_CATALOG_FILE", Default: 4 << 20, Unit: "bytes"}
	// HARFile is the largest HAR export imported: 64 MiB of bodies is two
	// fixtures' worth; larger captures are split per page in the browser.
	HARFile = Bound{Env: "ABKIT_MAX_HAR_FILE", Default: 64 << 20, Unit: "bytes"}
	// URLBody is the default bound on a url: catalog answer.
	URLBody = Bound{Env: "ABKIT_MAX_URL_BODY", Default: 4 << 20, Unit: "bytes"}
	// Baseline is the largest conformance baseline or reattach file read.
	Baseline = Bound{Env: "ABKIT_MAX_BASELINE_FILE", Default: 16 << 20, Unit: "bytes"}
	// Body is the largest request or response body a fixture holds, and
	// the largest body file imported.
	Body = Bound{Env: "ABKIT_MAX_BODY", Default: 32 << 20, Unit: "bytes"}

	// YAMLDepth is the deepest nesting of mappings and sequences in a
	// YAML document (block and flow alike).
	YAMLDepth = Bound{Env: "ABKIT_MAX_YAML_DEPTH", Default: 100, Unit: "levels"}
	// YAMLNodes bounds the nodes of a YAML document after its aliases are
	// expanded: the defence against "billion laughs" alias bombs. It is
	// checked on the parsed tree, before anything is expanded.
	YAMLNodes = Bound{Env: "ABKIT_MAX_YAML_NODES", Default: 200_000, Unit: "nodes"}
	// YAMLExpanded bounds the bytes of a YAML document's scalars after
	// its aliases are expanded, checked like YAMLNodes: a few aliases to
	// one large string are few nodes but many bytes.
	YAMLExpanded = Bound{Env: "ABKIT_MAX_YAML_EXPANDED", Default: 16 << 20, Unit: "bytes"}
	// YAMLTokens bounds the tokens a YAML document may hold, estimated
	// from its bytes before the parser allocates one object per token.
	YAMLTokens = Bound{Env: "ABKIT_MAX_YAML_TOKENS", Default: 400_000, Unit: "tokens"}
	// PluginMessage is the largest gRPC message a plugin or runtime may
	// send the host (an answer carrying a body, a description). Over it
	// the call fails with a limit error at once, before the message is
	// read into memory: a 100 MiB answer once took conformance to 7 GiB.
	// It must exceed Body, whose bodies plugins answer with.
	PluginMessage = Bound{Env: "ABKIT_MAX_PLUGIN_MESSAGE", Default: 64 << 20, Unit: "bytes"}
	// YAMLKeys bounds the keys of one block mapping in a YAML document,
	// counted on the lexer's tokens: go-yaml's parser takes time
	// quadratic in them (60,000 keys in 900 KB took dryrun 85 s).
	YAMLKeys = Bound{Env: "ABKIT_MAX_YAML_KEYS", Default: 5_000, Unit: "keys"}
	// JSONDepth is the deepest nesting of objects and arrays in a JSON
	// document abkit parses from input (HAR exports, baselines).
	JSONDepth = Bound{Env: "ABKIT_MAX_JSON_DEPTH", Default: 200, Unit: "levels"}
)

// All lists every bound, for CheckEnv and the docs test.
func All() []Bound {
	return []Bound{ChainFile, CatalogFile, HARFile, URLBody, Baseline, Body, PluginMessage, YAMLDepth, YAMLNodes, YAMLExpanded, YAMLTokens, YAMLKeys, JSONDepth}
}

// Max returns the bound in force: the value of b.Env when it is set and
// valid, else b.Default. abctl and conformance refuse an invalid value at
// start (CheckEnv), so the fallback only serves library callers.
func (b Bound) Max() int64 {
	if v, ok := os.LookupEnv(b.Env); ok {
		if n, err := ParseValue(v, b.Unit == "bytes"); err == nil {
			return n
		}
	}
	return b.Default
}

// Int is Max as an int, for lengths.
func (b Bound) Int() int { return int(min(b.Max(), int64(math.MaxInt))) }

// Error returns the error for input named file over b: got is what the
// input had, or -1 when only "more" is known.
func (b Bound) Error(file, limit string, got int64, fix string) *Error {
	return &Error{File: file, Limit: limit, Max: b.Max(), Got: got, Unit: b.Unit, Fix: fix, Env: b.Env}
}

// CheckEnv reports the first limit variable set to something that is not
// a positive count or size, so a typo is a usage error rather than a
// silently ignored setting.
func CheckEnv() error {
	for _, b := range All() {
		if v, ok := os.LookupEnv(b.Env); ok {
			if _, err := ParseValue(v, b.Unit == "bytes"); err != nil {
				return fmt.Errorf("%s=%q: %v (docs/limits.md)", b.Env, v, err)
			}
		}
	}
	return nil
}

// ParseValue reads a limit's value: a positive decimal count; sizes may
// end in KiB, MiB or GiB (or K, M, G, meaning the same).
func ParseValue(v string, size bool) (int64, error) {
	s := strings.TrimSpace(v)
	mult := int64(1)
	if size {
		for _, u := range []struct {
			suffix string
			m      int64
		}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
			if strings.HasSuffix(s, u.suffix) {
				s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.m
				break
			}
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		if size {
			return 0, errors.New("want a positive size such as 8MiB, 512KiB or 1048576")
		}
		return 0, errors.New("want a positive whole number")
	}
	return n * mult, nil
}

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
	// Env, when set, is the environment variable that raises the bound;
	// the message says how.
	Env string
}

func (e *Error) Error() string {
	var msg string
	if e.Detail != "" {
		msg = fmt.Sprintf("%s: %s (%s; docs/limits.md)", e.File, e.Detail, e.Limit)
	} else {
		got, max := "over", e.format(e.Max)
		if e.Got >= 0 {
			g := e.format(e.Got)
			if e.Unit == "bytes" && e.Got >= 1<<20 && e.Max >= 1<<20 && e.Got != e.Max && fmt.Sprintf("%.1f", float64(e.Got)/(1<<20)) == fmt.Sprintf("%.1f", float64(e.Max)/(1<<20)) {
				// Rounding hides the difference ("32.0 MiB, over the
				// limit of 32.0 MiB"): the exact bytes say it.
				g, max = fmt.Sprintf("%s (%d %s)", g, e.Got, e.Unit), fmt.Sprintf("%s (%d %s)", max, e.Max, e.Unit)
			}
			got = g + ", over"
		}
		msg = fmt.Sprintf("%s: %s %s the limit of %s (docs/limits.md)", e.File, e.Limit, gotPhrase(got), max)
	}
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	if e.Env != "" {
		msg += fmt.Sprintf("; or raise the limit: %s=%s", e.Env, e.raised())
	}
	return msg
}

// raised suggests a value for Env that the input would fit: what it had
// rounded up, or four times the bound when only "more" is known.
func (e *Error) raised() string {
	want := e.Max * 4
	if e.Got > e.Max {
		want = e.Got + e.Got/4
	}
	if e.Unit != "bytes" {
		return strconv.FormatInt(want, 10)
	}
	mib := (want + 1<<20 - 1) >> 20
	return fmt.Sprintf("%dMiB", mib)
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

// ReadFile reads path whole, refusing more than b.Max() bytes: a regular
// file's size is checked first, and whatever it is (a pipe, /dev/zero, a
// file still growing) no more than the bound plus one byte is ever read;
// /dev/null reads as empty. what names the bound for the error ("chain
// file size"), fix says what to do about it.
func ReadFile(path, what string, b Bound, fix string) ([]byte, error) {
	return ReadFileMax(path, what, b.Max(), fix, b.Env)
}

// ReadFileMax is ReadFile for a bound derived from another (a fixture
// file's from the body bound): max is the bound, env the variable that
// raises it.
func ReadFileMax(path, what string, max int64, fix, env string) ([]byte, error) {
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
			return nil, &Error{File: path, Limit: what, Max: max, Got: st.Size(), Unit: "bytes", Fix: fix, Env: env}
		}
		// Read into one buffer of the right size rather than doubling
		// one up to it: a file near the limit costs its size, not 3x.
		var b bytes.Buffer
		b.Grow(int(st.Size()) + bytes.MinRead + 1)
		if _, err := b.ReadFrom(io.LimitReader(fh, max+1)); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if int64(b.Len()) > max { // it grew while we read
			return nil, &Error{File: path, Limit: what, Max: max, Got: -1, Unit: "bytes", Fix: fix, Env: env}
		}
		return b.Bytes(), nil
	}
	data, err := ReadAll(fh, path, what, max, fix)
	var le *Error
	if errors.As(err, &le) {
		le.Env = env
	}
	return data, err
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
