package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestTraceSearchAndGoTo drives the real program: after a dry-run, /
// finds the step whose frame text mentions a word (and / enter finds the
// next), :N goes to step N, and q typed into a query is text, not quit.
func TestTraceSearchAndGoTo(t *testing.T) {
	m := New(testOptions(t))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor(t, tm, "a2a-parser")
	tm.Send(k("3"))
	waitFor(t, tm, "Choose a fixture")
	tm.Send(k("j")) // the sample the guardrail rejects
	tm.Send(k("enter"))
	waitFor(t, tm, "calls")
	tm.Type(":3")
	tm.Send(k("enter"))
	waitFor(t, tm, "went to step")
	tm.Type("/reject")
	tm.Send(k("enter"))
	waitFor(t, tm, "found")
	tm.Type("/q")
	tm.Send(k("esc"))
	tm.Type(":99")
	tm.Send(k("enter"))
	waitFor(t, tm, `no step "99"`)
	tm.Send(k("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	r := fm.tr.run
	if r == nil || r.Events[fm.tr.cursor].Action != "reject" || fm.tr.query != "reject" {
		t.Fatalf("after /reject the cursor is on %+v (query %q)", r.Events[fm.tr.cursor], fm.tr.query)
	}
}

// TestTraceDetailScrollAndCopy drives the real program at 80×24: a frame
// too long for the detail pane says how much is left, J scrolls to its
// end (the last word becomes visible), and y puts the step on the
// clipboard as JSON through OSC 52.
func TestTraceDetailScrollAndCopy(t *testing.T) {
	opts := testOptions(t)
	long := strings.Repeat("lorem ipsum ", 120) + "THE-END"
	opts.Fixtures = []Exchange{{Name: "long-frame", Request: chatRequest("hi"), Status: 200, Header: sseHeader(),
		Chunks: [][]byte{[]byte(`data: {"choices":[{"delta":{"content":"` + long + `"}}]}` + "\n\n")}}}
	m := New(opts)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor(t, tm, "a2a-parser")
	tm.Send(k("3"))
	waitFor(t, tm, "Choose a fixture")
	tm.Send(k("enter"))
	waitFor(t, tm, "calls")
	tm.Send(k("f")) // the first frame call
	waitFor(t, tm, "more line(s): J/K scroll")
	for range 40 {
		tm.Send(k("J"))
	}
	waitFor(t, tm, "THE-END")
	tm.Send(k("y"))
	waitFor(t, tm, "\x1b]52;c;")
	tm.Send(k("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if fm.tr.detailOff == 0 {
		t.Error("J did not scroll the detail pane")
	}
}
