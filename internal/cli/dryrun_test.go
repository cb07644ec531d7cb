package cli

import (
	"bytes"
	"encoding/json"
	"github.com/goccy/go-yaml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/trace"
)

// dryrun --sse -o json: one on_response_frame event per SSE event for each
// streaming plugin, plus exactly one last call each (P19, P21).
func TestDryrunSSEJSON(t *testing.T) {
	code, out, errOut := runAbctl(t, "dryrun", "--chain", "../../fixtures/inference/chain.yaml",
		"--sse", "../../fixtures/inference/captures/messages-stream.sse", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep replay.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	body, _ := os.ReadFile("../../fixtures/inference/captures/messages-stream.sse")
	events := strings.Count("\n"+string(body), "\ndata: ")
	frames := map[string]int{}
	last := map[string]int{}
	for _, e := range rep.Events {
		if e.Hook != "on_response_frame" {
			continue
		}
		if e.Last {
			last[e.Plugin]++
		} else {
			frames[e.Plugin]++
		}
	}
	for _, p := range []string{"inference-parser", "guardrail"} {
		if frames[p] != events || last[p] != 1 {
			t.Errorf("%s: %d frame calls and %d last calls, want %d and 1", p, frames[p], last[p], events)
		}
	}
	if rep.Outcome.Kind != "allow" || rep.Outcome.Frames != events {
		t.Errorf("outcome %+v", rep.Outcome)
	}
	for _, k := range []string{`"seq"`, `"hook"`, `"plugin"`, `"frame"`, `"last"`, `"action"`, `"duration_ns"`, `"outcome"`} {
		if !strings.Contains(out, k) {
			t.Errorf("JSON lacks %s", k)
		}
	}
}

func TestDryrunWarningsAndErrors(t *testing.T) {
	code, out, _ := runAbctl(t, "dryrun", "--chain", "../../fixtures/inference/chain.yaml", "../../fixtures/inference/cut-mid-event.fixture", "-o", "json")
	if code != 0 || !strings.Contains(out, "unterminated final SSE block") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// Off a terminal stdout holds only the event rows; the outcome and
	// warnings go to stderr.
	code, out, errOut := runAbctl(t, "dryrun", "--chain", "../../fixtures/inference/chain.yaml", "../../fixtures/inference/cut-mid-event.fixture")
	if code != 0 || !strings.Contains(errOut, "warning:") || !strings.Contains(errOut, "outcome: allow 200") ||
		strings.Contains(out, "outcome") || strings.Contains(out, "warning") {
		t.Fatalf("text: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Count(l, "\t") != 6 {
			t.Errorf("stdout line is not one 7-column event row: %q", l)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.fixture")
	os.WriteFile(bad, []byte("abkit-fixture 9\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dryrun", "--chain", "../../fixtures/inference/chain.yaml", bad}, ExitRead, "bad.fixture:1: version"},
		{[]string{"dryrun", "../../fixtures/inference/chat-stream.fixture"}, ExitUsage, "--chain is required"},
		{[]string{"dryrun", "--chain", "../../fixtures/inference/chain.yaml"}, ExitUsage, "exactly one of"},
		{[]string{"dryrun", "--chain", "../../fixtures/inference/chain.yaml", "--direction", "inbound", "../../fixtures/inference/chat-stream.fixture"}, ExitUsage,
			"--direction inbound: ../../fixtures/inference/chain.yaml has no inbound entries; add an \"inbound\" list to it, or run with --direction outbound"},
	} {
		code, _, errOut := runAbctl(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}

// TestDryrunTableFitsTerminal: on a terminal (COLUMNS=80) the dry-run
// table fits 80 cells with the reject's reason wrapped in its column, and
// the outcome follows it; piped, each event is one whole tab-separated
// line on stdout and the outcome goes to stderr.
func TestDryrunTableFitsTerminal(t *testing.T) {
	args := []string{"--no-color", "dryrun", "--chain", "../../fixtures/inference/chain.yaml", "../../fixtures/inference/mid-stream-reject.fixture"}
	reason := `blocked by guardrail rule phrases[0] ("drop table") in the response`
	r := run(t, true, map[string]string{"COLUMNS": "80"}, args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	for _, l := range strings.Split(strings.TrimRight(r.out, "\n"), "\n") {
		if w := ansi.StringWidth(l); w > 80 && !strings.HasPrefix(l, "outcome:") {
			t.Errorf("table line of %d cells at COLUMNS=80: %q", w, l)
		}
	}
	if flat := strings.Join(strings.Fields(r.out), " "); !strings.Contains(flat, "reject 451 "+strings.Fields(reason)[0]) || !strings.Contains(r.out, "\noutcome: deny") {
		t.Errorf("terminal output lost the reason or the outcome:\n%s", r.out)
	}
	r = run(t, false, map[string]string{"COLUMNS": "40"}, args...)
	if !strings.Contains(r.out, "\treject\t451 "+reason+"\t") || strings.Contains(r.out, "outcome:") || !strings.Contains(r.err, "outcome: deny") {
		t.Errorf("piped: stdout %q, stderr %q; want whole rows on stdout and the outcome on stderr", r.out, r.err)
	}
}

// A fixture that breaks late (its end cut off) is refused before the run:
// exit 3 naming the file, and nothing on stdout, in every output format,
// although the trace is written as the run goes.
func TestDryrunLateBreakWritesNothing(t *testing.T) {
	data, err := os.ReadFile("../../fixtures/bigstream/10k-events.fixture")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.fixture")
	os.WriteFile(cut, data[:len(data)-200], 0o644)
	for _, format := range []string{"table", "json", "yaml"} {
		code, out, errOut := runAbctl(t, "dryrun", "--chain", "../../fixtures/bigstream/chain.yaml", cut, "-o", format)
		if code != ExitRead || out != "" || !strings.Contains(errOut, "cut.fixture:") {
			t.Errorf("-o %s: exit %d, stdout %d bytes, stderr:\n%s", format, code, len(out), errOut)
		}
	}
}

// The streamed -o json is the canonical golden form: a dry-run's output,
// durations aside, is what replay --update writes.
func TestDryrunJSONIsGoldenForm(t *testing.T) {
	code, out, errOut := runAbctl(t, "dryrun", "--chain", "../../fixtures/bigstream/chain.yaml", "../../fixtures/bigstream/10k-events.fixture", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep replay.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Outcome.Frames != 10000 || len(rep.Events) < 10000 {
		t.Fatalf("%d events, outcome %+v", len(rep.Events), rep.Outcome)
	}
	canon, err := rep.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	if string(canon) != out {
		t.Error("dryrun -o json is not the canonical golden form of its own report")
	}
}

// The streamed -o yaml is the document writeData writes for the whole
// report: with and without events and warnings, and with text that YAML
// writes as a block (a multi-line reason) or must quote.
func TestYAMLReportWriterMatchesWriteData(t *testing.T) {
	frame := 3
	full := replay.Report{
		Events: []trace.Event{
			{Seq: 1, Family: trace.FamilyPipeline, Direction: "outbound", Hook: "on_request", Plugin: "a", Action: "continue", DurationNS: 12},
			{Seq: 2, Family: trace.FamilyPipeline, Hook: "on_response_frame", Plugin: "b: c", Frame: &frame, Last: true,
				Action: "reject", Reason: "line one\nline two: \"quoted\"", Status: 403, Error: "- not a list", DurationNS: 7},
		},
		Outcome:  replay.Outcome{Kind: "deny", Status: 403, DeniedBy: "b: c", Reason: "yes", Streamed: true, Frames: 4, Relayed: 10},
		Warnings: []string{"unterminated final SSE block", "true"},
	}
	for name, rep := range map[string]replay.Report{
		"full":      full,
		"no events": {Events: []trace.Event{}, Outcome: full.Outcome},
		"no warns":  {Events: full.Events, Outcome: full.Outcome},
	} {
		var want, got bytes.Buffer
		if err := writeData(&want, "yaml", rep); err != nil {
			t.Fatal(err)
		}
		y := &yamlReportWriter{w: &got}
		for i := range rep.Events {
			if err := y.event(&rep.Events[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := y.finish(rep.Outcome, rep.Warnings); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: streamed YAML:\n%s\nwant:\n%s", name, got.String(), want.String())
		}
	}
}

// Off a terminal a row is written straight from the event; it is the line
// writeTable writes for the same cells, hostile text included.
func TestTableLineMatchesWriteTable(t *testing.T) {
	frame := 7
	events := []trace.Event{
		{Seq: 1, Hook: "on_request", Plugin: "guardrail", Action: "continue", DurationNS: 1500},
		{Seq: 12, Hook: "on_response_frame", Plugin: "p\x1b[31m", Frame: &frame, Last: true, Action: "reject",
			Reason: "bad\tword\nhere", Status: 451, Mutated: "response_body", Shadow: true, Error: "e\r", DurationNS: 99},
		{Seq: 3, Hook: "on_finish", Plugin: "a", Action: "error", Error: "boom"},
	}
	for _, e := range events {
		var want, got bytes.Buffer
		o := &globalOpts{app: &App{Out: &got, Err: io.Discard, Getenv: func(string) string { return "" }}}
		tw := newTableWriter(o, &got)
		if err := writeTable(&want, false, 0, tw.p, nil, [][]string{eventRow(tw.p, &e)}); err != nil {
			t.Fatal(err)
		}
		if err := tw.event(&e); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("row %q, writeTable %q", got.String(), want.String())
		}
	}
}

// TestDryrunShowsExtensions: every output format shows what the parser
// extracted at the step it did, without an observer plugin.
func TestDryrunShowsExtensions(t *testing.T) {
	args := []string{"dryrun", "--chain", "../../fixtures/inference/chain.yaml", "../../fixtures/inference/json-completion.fixture"}
	for _, tc := range []struct{ format, want string }{
		{"table", "ext inference={"},
		{"json", `"extensions":[{"key":"inference","value":{`},
		{"yaml", "extensions:"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			code, out, errOut := runAbctl(t, append(args, "-o", tc.format)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			flat := strings.Join(strings.Fields(out), "")
			if !strings.Contains(out, tc.want) && !strings.Contains(flat, strings.Join(strings.Fields(tc.want), "")) {
				t.Errorf("-o %s lacks %q:\n%s", tc.format, tc.want, out)
			}
			if tc.format == "yaml" && !strings.Contains(out, "key: inference") {
				t.Errorf("-o yaml lacks the key:\n%s", out)
			}
		})
	}
}

// TestCatalogShowsExtensions: catalog show lists what a plugin declares it
// writes and reads; catalog list -o json carries the declarations whole.
func TestCatalogShowsExtensions(t *testing.T) {
	code, out, errOut := runAbctl(t, "catalog", "show", "guardrail")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "reads inference (optional)") || !strings.Contains(out, "reads mcp (optional)") {
		t.Errorf("catalog show guardrail lacks its reads:\n%s", out)
	}
	code, out, errOut = runAbctl(t, "catalog", "list", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"key": "inference"`) || !strings.Contains(out, `"schema": {`) {
		t.Errorf("catalog list -o json lacks the inference declaration with its schema")
	}
}

// The streamed -o yaml writes no raw control byte from traffic or a
// plugin (the YAML library wrote ESC raw in plain scalars): such an item is
// written as JSON, which is YAML, and decodes to the same text.
func TestYAMLReportWriterEscapesControlBytes(t *testing.T) {
	reason := "\x1b]0;owned\x07\x1b[2J\u009b31m"
	var got bytes.Buffer
	y := &yamlReportWriter{w: &got}
	if err := y.event(&trace.Event{Seq: 1, Hook: "on_request", Plugin: "p", Action: "reject", Reason: reason}); err != nil {
		t.Fatal(err)
	}
	if err := y.finish(replay.Outcome{Kind: "deny", Reason: reason}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(got.String(), "\x1b\x07\u009b") {
		t.Fatalf("raw control bytes:\n%q", got.String())
	}
	var back replay.Report
	if err := yaml.Unmarshal(got.Bytes(), &back); err != nil {
		t.Fatalf("%v in\n%s", err, got.String())
	}
	if len(back.Events) != 1 || back.Events[0].Reason != reason || back.Outcome.Reason != reason {
		t.Errorf("decoded %+v", back)
	}
}
