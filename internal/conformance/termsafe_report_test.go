package conformance

import (
	"bytes"
	"strings"
	"testing"
)

// The text report escapes control bytes a plugin wrote (stdout before
// the handshake, panic text, stderr): 72 raw ESC bytes once cleared the
// terminal and set its title.
func TestTextReportEscapesControlBytes(t *testing.T) {
	esc := "\x1b]0;owned\x07\x1b[2J"
	res := CaseResult{ID: "P1/x", Rules: []string{"P1"}, Status: StatusFail, Stderr: "panic: " + esc,
		Failures: []Failure{{Rule: "P1", Message: "plugin wrote " + esc + " before the handshake"}}}
	rep := &Report{Target: "t", Plugin: &Reported{Name: "p" + esc}, Results: []CaseResult{res}}
	var out bytes.Buffer
	if err := WriteText(&out, rep, true, true); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.ContainsAny(s, "\x1b\x07") || !strings.Contains(s, `\x1b]0;owned\x07`) {
		t.Fatalf("report:\n%q", s)
	}
}
