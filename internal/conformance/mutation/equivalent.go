package mutation

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// EquivalentList is the reviewed list of equivalent mutants: mutants that
// change the source but not any behaviour a host or client could observe.
// Each line is a mutant key, whitespace, and a one-line reason; # starts a
// comment line. A listed mutant is not run and not counted, and is printed
// with its reason in every report, so the list stays visible.
type EquivalentList struct {
	Path    string
	reasons map[string]string
	lines   map[string]int
}

// LoadEquivalent reads the list; a missing reason is an error naming the
// line.
func LoadEquivalent(path string) (*EquivalentList, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l := &EquivalentList{Path: path, reasons: map[string]string{}, lines: map[string]int{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, why, _ := strings.Cut(line, " ")
		why = strings.TrimSpace(why)
		if why == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason; write why the mutant is equivalent after its key", path, n, key)
		}
		if prev, dup := l.lines[key]; dup {
			return nil, fmt.Errorf("%s:%d: %s is already listed on line %d", path, n, key, prev)
		}
		l.reasons[key], l.lines[key] = why, n
	}
	return l, sc.Err()
}

// Reason returns why the mutant is equivalent, if it is listed.
func (l *EquivalentList) Reason(key string) (string, bool) {
	if l == nil {
		return "", false
	}
	r, ok := l.reasons[key]
	return r, ok
}

// Stale returns the listed keys that name no mutant in ms (the code moved
// or changed): each must be reviewed again, not kept silently.
func (l *EquivalentList) Stale(ms []*Mutant) []string {
	if l == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m.Key] = true
	}
	var out []string
	for k := range l.reasons {
		if !seen[k] {
			out = append(out, fmt.Sprintf("%s:%d: %s", l.Path, l.lines[k], k))
		}
	}
	return out
}
