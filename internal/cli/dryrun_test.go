package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/abkit/abkit/internal/replay"
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
