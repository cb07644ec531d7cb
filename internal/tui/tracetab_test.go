package tui

import (
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
	waitFor(t, tm, "step 3")
	tm.Type("/reject")
	tm.Send(k("enter"))
	waitFor(t, tm, "/reject: step")
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
