package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/charmbracelet/x/ansi"

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
	// The request step's extension already filled the pane, so the "more
	// line(s)" hint may stay on screen, unredrawn: wait for the step.
	waitFor(t, tm, "on_response_frame inference-parser")
	// Past the extension the parser set (the same text) to the frame's end.
	for range 100 {
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

// TestExtensionLines: the trace detail shows what a step left in the
// extensions: the value as indented JSON, a removal, or a refusal and why.
func TestExtensionLines(t *testing.T) {
	th := newTheme(false, true)
	got := strings.Join(extensionLines(trace.ExtensionDelta{Key: "inference", Value: []byte(`{"model":"m","done":true}`)}, 60, th), "\n")
	for _, want := range []string{"ext      inference set", `  {`, `    "model": "m",`, `    "done": true`} {
		if !strings.Contains(got, want) {
			t.Errorf("set: missing %q in\n%s", want, got)
		}
	}
	if got := strings.Join(extensionLines(trace.ExtensionDelta{Key: "a", Removed: true}, 60, th), "\n"); !strings.Contains(got, "a removed") {
		t.Errorf("removed: %q", got)
	}
	got = ansi.Strip(strings.Join(extensionLines(trace.ExtensionDelta{Key: "a", Value: []byte(`1`), Refused: "at /: got number, want string"}, 60, th), "\n"))
	if !strings.Contains(got, "a refused: at /: got number, want string") {
		t.Errorf("refused: %q", got)
	}
}

// TestWithPluginsSource: a dry-run asks Options.Plugins for the entries
// no factory makes and for those whose source: is dir, whose binary then
// replaces the built-in; source: builtin never asks, and a source: dir
// entry no binary serves is an error that names it.
func TestWithPluginsSource(t *testing.T) {
	cf, err := catalog.ParseChain("c.yaml", []byte("inbound:\n  - name: guardrail\n    source: dir\n  - name: mcp-parser\n    source: builtin\n  - name: elsewhere\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := testFactories()
	binary := gateway.Factory{Name: "guardrail", Config: &gateway.ConfigSchema{}} // told apart by its schema
	var asked []string
	plugins := func(_ context.Context, _ *catalog.Catalog, names []string) ([]gateway.Factory, func(), error) {
		asked = names
		return []gateway.Factory{binary, {Name: "elsewhere"}}, nil, nil
	}
	got, _, err := withPlugins(context.Background(), cf, gateway.Inbound, fs, nil, plugins)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, ",") != "guardrail,elsewhere" {
		t.Errorf("asked for %v, want guardrail (source: dir) and elsewhere (not built in)", asked)
	}
	var guardrails []gateway.Factory
	for _, f := range got {
		if f.Name == "guardrail" {
			guardrails = append(guardrails, f)
		}
	}
	if len(guardrails) != 1 || guardrails[0].Config != binary.Config {
		t.Errorf("guardrail factories %v, want only the binary's", guardrails)
	}
	none := func(context.Context, *catalog.Catalog, []string) ([]gateway.Factory, func(), error) {
		return nil, nil, nil
	}
	if _, _, err := withPlugins(context.Background(), cf, gateway.Inbound, fs, nil, none); err == nil ||
		!strings.Contains(err.Error(), `chain entry "guardrail" says source: dir, and no plugin binary of that name was found`) {
		t.Errorf("no binary for source: dir: err %v", err)
	}
}
