package conformance

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/junit"
	"github.com/abkit/abkit/internal/termsafe"
)

// WriteText prints the report for a terminal or a log: one line per case
// that did not simply pass (or every case with verbose), each failure with
// its rule and diff, then a summary by family and rule.
func WriteText(w io.Writer, rep *Report, verbose, withTrace bool) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "conformance: %s %q (%s), families %s, %s isolation, -p %d\n",
		cmp.Or(rep.Kind, "plugin"), rep.Plugin.Name, rep.Target, strings.Join(rep.Plugin.Families, ","), rep.Isolation, rep.Parallel)
	for _, n := range rep.Notes {
		fmt.Fprintf(ew, "note: %s\n", n)
	}
	for _, r := range rep.Results {
		if (r.Status == StatusPass || r.Status == StatusSkip) && !verbose && !withTrace {
			continue
		}
		line := fmt.Sprintf("%-13s %s", strings.ToUpper(string(r.Status)), r.ID)
		if r.Kind == KindChoice {
			line += "  [choice " + r.Choice + "]"
		}
		switch {
		case r.Status == StatusSkip:
			line += "  (" + r.Reason + ")"
		case r.Attempts > 1:
			line += fmt.Sprintf("  (%d attempts, %v)", r.Attempts, r.Duration.Round(time.Millisecond))
		default:
			line += fmt.Sprintf("  (%v)", r.Duration.Round(time.Millisecond))
		}
		fmt.Fprintln(ew, line)
		if r.Status == StatusDiffers || (r.Kind == KindChoice && r.Status.Bad()) {
			if n := choiceNote(r); n != "" {
				fmt.Fprintf(ew, "    %s\n", n)
			}
		}
		for _, g := range GroupFailures(r.Failures) {
			fmt.Fprintf(ew, "    %s\n", indent(g.String(), "      "))
		}
		if (r.Status.Bad() || withTrace) && strings.TrimSpace(r.Stderr) != "" {
			fmt.Fprintf(ew, "    %s stderr:\n      %s\n", cmp.Or(rep.Kind, "plugin"), indent(strings.TrimRight(lastLines(r.Stderr, 20), "\n"), "      "))
		}
		if withTrace && len(r.Log) > 0 {
			fmt.Fprintf(ew, "    trace:\n")
			for _, l := range r.Log {
				fmt.Fprintf(ew, "      %s\n", l)
			}
		}
	}
	fmt.Fprintln(ew)
	fmt.Fprintln(ew, "by rule:")
	for _, row := range ruleSummary(rep) {
		fmt.Fprintf(ew, "  %-4s %s\n", row.rule, row.text)
	}
	c := rep.Counts()
	fmt.Fprintf(ew, "\n%d cases: %d passed, %d failed, %d skipped", len(rep.Results), c[StatusPass], c[StatusFail], c[StatusSkip])
	if n := c[StatusDiffers]; n > 0 {
		fmt.Fprintf(ew, ", %d differ from abkit's choices (not faults; --strict counts them)", n)
	}
	if n := c[StatusKnownFailing]; n > 0 {
		fmt.Fprintf(ew, ", %d known-failing", n)
	}
	if n := c[StatusFlaky]; n > 0 {
		fmt.Fprintf(ew, ", %d flaky", n)
	}
	if n := c[StatusFixed]; n > 0 {
		fmt.Fprintf(ew, ", %d fixed (remove from the baseline)", n)
	}
	fmt.Fprintf(ew, " in %v\n", rep.Duration.Round(time.Millisecond))
	if rep.Interrupted {
		fmt.Fprintln(ew, "interrupted: the results above are partial")
	}
	return ew.err
}

// choiceNote says, for a failed check of a choice, which behaviour abkit
// takes, which others the contract allows, and what to do. A rule case
// whose only findings follow choices names each of them.
func choiceNote(r CaseResult) string {
	if r.Choice == "" {
		var notes []string
		seen := map[string]bool{}
		for _, f := range r.Failures {
			if f.Choice != "" && !seen[f.Choice] {
				seen[f.Choice] = true
				cp, _ := ChoicePointByID(f.Choice)
				notes = append(notes, noteFor(cp, cp.Reference, r.Status, ""))
			}
		}
		return strings.Join(notes, "\n    ")
	}
	cp, _ := ChoicePointByID(r.Choice)
	return noteFor(cp, r.Alternative, r.Status, r.Declared)
}

func noteFor(cp ChoicePoint, checked string, st Status, declared string) string {
	var others []string
	summary := checked
	for _, a := range cp.Alternatives {
		if a.Name == checked {
			summary += " (" + a.Summary + ")"
		} else {
			others = append(others, a.Name+" ("+a.Summary+")")
		}
	}
	switch {
	case st == StatusDiffers:
		return fmt.Sprintf("choice %s, %s: this checks %s; the contract also allows %s. Not a fault if you take another: declare it (docs/conformance.md, \"Declared alternatives\") and the suite checks that one.",
			cp.ID, cp.Summary, summary, strings.Join(others, "; "))
	case declared != "":
		return fmt.Sprintf("choice %s: you declare %s, and this checks it: a fault", cp.ID, summary)
	}
	return fmt.Sprintf("choice %s, judged strict: this checks abkit's %s", cp.ID, summary)
}

// FailureGroup is one finding and every place it was made: a case that
// drives six exchanges into the same broken hook reports it once, with a
// count, instead of six times.
type FailureGroup struct {
	Failure
	// At lists the places, in the order they were found; empty when the
	// failures named none.
	At []string
	// Count is how many failures the group holds.
	Count int
}

// GroupFailures groups failures with the same rule, message and diff, in
// the order each was first found.
func GroupFailures(fs []Failure) []FailureGroup {
	var out []FailureGroup
	idx := map[[4]string]int{}
	for _, f := range fs {
		k := [4]string{f.Rule, f.Message, f.Diff, f.Choice}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, FailureGroup{Failure: Failure{Rule: f.Rule, Message: f.Message, Diff: f.Diff, Choice: f.Choice}})
		}
		g := &out[i]
		g.Count++
		if f.At != "" {
			g.At = append(g.At, f.At)
		}
	}
	return out
}

// maxPlaces caps the places listed under a grouped finding; JSON keeps
// every failure.
const maxPlaces = 6

// String renders the group: "RULE: AT: MESSAGE" for one failure, else
// "RULE (N times): MESSAGE" and the places, one a line; then the diff.
func (g FailureGroup) String() string {
	var b strings.Builder
	rule := g.Rule
	if g.Choice != "" {
		rule += " [choice " + g.Choice + "]"
	}
	switch {
	case g.Count == 1 && len(g.At) == 1:
		b.WriteString(rule + ": " + g.At[0] + ": " + g.Message)
	case g.Count == 1:
		b.WriteString(rule + ": " + g.Message)
	default:
		fmt.Fprintf(&b, "%s (%d times): %s", rule, g.Count, g.Message)
		for i, at := range g.At {
			if i == maxPlaces {
				fmt.Fprintf(&b, "\n  … and %d more", len(g.At)-maxPlaces)
				break
			}
			b.WriteString("\n  at " + at)
		}
	}
	if g.Diff != "" {
		b.WriteString("\n" + g.Diff)
	}
	return b.String()
}

type ruleRow struct{ rule, text string }

// ruleSummary tallies results per rule, families in P, D, H order.
func ruleSummary(rep *Report) []ruleRow {
	type tally struct{ pass, fail, skip, differ, other int }
	m := map[string]*tally{}
	for _, r := range rep.Results {
		for _, id := range r.Rules {
			t := m[id]
			if t == nil {
				t = &tally{}
				m[id] = t
			}
			switch {
			case r.Status == StatusPass || r.Status == StatusFlaky:
				t.pass++
			case r.Status.Bad():
				t.fail++
			case r.Status == StatusSkip:
				t.skip++
			case r.Status == StatusDiffers:
				t.differ++
			default:
				t.other++
			}
		}
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ruleLess(ids[i], ids[j]) })
	var rows []ruleRow
	for _, id := range ids {
		t := m[id]
		verdict := "ok"
		switch {
		case t.fail > 0:
			verdict = "FAIL"
		case t.differ > 0:
			verdict = "differs (choice)"
		case t.pass == 0 && t.other == 0:
			verdict = "not applicable"
		case t.other > 0:
			verdict = "known-failing"
		}
		text := fmt.Sprintf("%-16s %d passed, %d failed, %d skipped", verdict, t.pass, t.fail, t.skip)
		if t.differ > 0 {
			text += fmt.Sprintf(", %d differ", t.differ)
		}
		rows = append(rows, ruleRow{id, text})
	}
	return rows
}

// ruleLess orders rule IDs by family (P, D, H) then number.
func ruleLess(a, b string) bool {
	fam := func(s string) int { return strings.Index("PDH", s[:1]) }
	if fa, fb := fam(a), fam(b); fa != fb {
		return fa < fb
	}
	var na, nb int
	fmt.Sscanf(a[1:], "%d", &na)
	fmt.Sscanf(b[1:], "%d", &nb)
	return na < nb
}

func indent(s, pre string) string { return strings.ReplaceAll(s, "\n", "\n"+pre) }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d earlier lines)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

type errWriter struct {
	w   io.Writer
	err error
}

// Write escapes control bytes (termsafe): the report quotes what plugins
// wrote (stdout before the handshake, panics, stderr), and 72 raw ESC
// bytes once cleared the terminal and set its title.
func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	_, err := io.WriteString(e.w, termsafe.String(string(p)))
	e.err = err
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteJSON writes the report as indented JSON. Traces and logs are kept
// only when withTrace is set.
func WriteJSON(w io.Writer, rep *Report, withTrace bool) error {
	out := *rep
	if !withTrace {
		out.Results = make([]CaseResult, len(rep.Results))
		for i, r := range rep.Results {
			r.Trace, r.Log = nil, nil
			out.Results[i] = r
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	// What plugins wrote (stderr, panics, names): no C1 control or bidi
	// override reaches a terminal raw.
	_, err := w.Write(termsafe.JSON(b.Bytes()))
	return err
}

// WriteJUnit writes the report as JUnit XML, one testsuite per family. A
// known-failing case is reported as skipped with the reason; a fixed one
// as a failure.
func WriteJUnit(w io.Writer, rep *Report) error {
	root := junit.Suites{Name: "conformance " + rep.Plugin.Name, Time: junit.Seconds(rep.Duration)}
	byFam := map[string]int{}
	var took []time.Duration
	for _, r := range rep.Results {
		fam := cmp.Or(rep.Kind, "plugin") + "." + r.ID[:1]
		i, ok := byFam[fam]
		if !ok {
			i = len(root.Suites)
			byFam[fam] = i
			root.Suites = append(root.Suites, junit.Suite{Name: fam})
			took = append(took, 0)
		}
		root.Suites[i].Add(junitCase(rep, r))
		took[i] += r.Duration
	}
	for i := range root.Suites {
		root.Suites[i].Time = junit.Seconds(took[i])
	}
	root.Total()
	return junit.Write(w, root)
}

// junitCase is one result as a JUnit test case.
func junitCase(rep *Report, r CaseResult) junit.Case {
	jc := junit.Case{Name: r.ID, Classname: "conformance." + rep.Plugin.Name, Time: junit.Seconds(r.Duration), SystemErr: r.Stderr}
	switch r.Status {
	case StatusFail, StatusFixed:
		var b strings.Builder
		for _, g := range GroupFailures(r.Failures) {
			b.WriteString(g.String() + "\n")
		}
		typ := strings.Join(r.Rules, ",")
		if r.Kind == KindChoice {
			typ = "choice " + r.Choice + ": " + typ
			b.WriteString(choiceNote(r) + "\n")
		}
		jc.Failure = &junit.Message{Message: firstLine(r.Failures), Type: typ, Body: b.String()}
	case StatusDiffers:
		// Not a fault: reported beside the passes, never as a failure.
		var b strings.Builder
		b.WriteString("differs from abkit's choice: " + choiceNote(r) + "\n")
		for _, g := range GroupFailures(r.Failures) {
			b.WriteString(g.String() + "\n")
		}
		jc.SystemOut = b.String()
	case StatusSkip:
		jc.Skipped = &junit.Message{Message: r.Reason}
	case StatusKnownFailing:
		jc.Skipped = &junit.Message{Message: "known-failing: " + firstLine(r.Failures)}
	case StatusFlaky:
		jc.SystemOut = fmt.Sprintf("flaky: passed on attempt %d", r.Attempts)
	}
	return jc
}

func firstLine(fs []Failure) string {
	if len(fs) == 0 {
		return ""
	}
	s := fs[0].String()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// WriteArtifacts keeps, for every case that ran, its trace (trace.json),
// its log with relative timestamps (log.txt) and the plugin's stderr
// (stderr.txt) under dir/<case ID with / as __>/.
func WriteArtifacts(dir string, rep *Report) error {
	for _, r := range rep.Results {
		if r.Status == StatusSkip {
			continue
		}
		d := filepath.Join(dir, strings.ReplaceAll(r.ID, "/", "__"))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("artifacts: %w", err)
		}
		tr, err := json.MarshalIndent(map[string]any{"events": nonNil(r.Trace)}, "", "  ")
		if err != nil {
			return fmt.Errorf("artifacts: %s: %w", r.ID, err)
		}
		files := map[string][]byte{
			"trace.json": append(tr, '\n'),
			"log.txt":    []byte(strings.Join(r.Log, "\n") + "\n"),
			"stderr.txt": []byte(r.Stderr),
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
				return fmt.Errorf("artifacts: %w", err)
			}
		}
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
