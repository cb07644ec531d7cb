package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/abkit/abkit/internal/limits"
)

// Baseline is a list of case ID patterns: known-failing or known-flaky
// cases. In a pattern, `*` matches one part of an ID (no `/`), `**` any run
// of characters including `/`; everything else matches itself. A nil
// Baseline matches nothing.
type Baseline struct {
	entries []baselineEntry
}

type baselineEntry struct {
	pattern string
	re      *regexp.Regexp
	where   string // file:line
}

// ParseBaselinePatterns makes a baseline from patterns given directly.
func ParseBaselinePatterns(patterns []string) (*Baseline, error) {
	b := &Baseline{}
	for i, p := range patterns {
		if err := b.add(p, fmt.Sprintf("pattern %d", i+1)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// LoadBaseline reads a baseline file: one pattern a line; `#` starts a
// comment; blank lines are ignored; a line `@FILE` includes another file,
// relative to this one.
func LoadBaseline(path string) (*Baseline, error) {
	b := &Baseline{}
	if err := b.load(path, 0); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Baseline) load(path string, depth int) error {
	if depth > 8 {
		return fmt.Errorf("baseline %s: @ includes nest deeper than 8; is there a cycle?", path)
	}
	data, err := limits.ReadFile(path, "baseline file size", limits.Baseline, "a baseline lists case patterns; this one is not that")
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "@"):
			inc := strings.TrimSpace(line[1:])
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			if err := b.load(inc, depth+1); err != nil {
				return fmt.Errorf("%s:%d: %w", path, n, err)
			}
		default:
			if err := b.add(line, fmt.Sprintf("%s:%d", path, n)); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("baseline %s: %w", path, err)
	}
	return nil
}

func (b *Baseline) add(p, where string) error {
	if strings.ContainsAny(p, " \t") {
		return fmt.Errorf("%s: pattern %q contains whitespace; case IDs have none", where, p)
	}
	re, err := regexp.Compile("^" + globToRegexp(p) + "$")
	if err != nil {
		return fmt.Errorf("%s: pattern %q: %w", where, p, err)
	}
	b.entries = append(b.entries, baselineEntry{pattern: p, re: re, where: where})
	return nil
}

func globToRegexp(p string) string {
	var sb strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case strings.HasPrefix(p[i:], "**"):
			sb.WriteString(".*")
			i++
		case p[i] == '*':
			sb.WriteString("[^/]*")
		default:
			sb.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	return sb.String()
}

// Match reports whether id matches an entry.
func (b *Baseline) Match(id string) bool {
	if b == nil {
		return false
	}
	for _, e := range b.entries {
		if e.re.MatchString(id) {
			return true
		}
	}
	return false
}

// Unused returns the entries (as "where: pattern") that match none of ids,
// so a report can point at baseline lines that name no case.
func (b *Baseline) Unused(ids []string) []string {
	if b == nil {
		return nil
	}
	var out []string
	for _, e := range b.entries {
		used := false
		for _, id := range ids {
			if e.re.MatchString(id) {
				used = true
				break
			}
		}
		if !used {
			out = append(out, e.where+": "+e.pattern)
		}
	}
	return out
}
