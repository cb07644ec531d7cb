package replay

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiffReports: differences are named by the golden file's JSON keys
// and each event by seq, hook and plugin, not by Go field names or
// indices.
func TestDiffReports(t *testing.T) {
	golden := `{"events":[
{"seq":1,"family":"P","hook":"on_request","plugin":"mcp-parser","action":"continue"},
{"seq":2,"family":"P","hook":"on_response_frame","plugin":"guardrail","frame":0,"action":"continue"}],
"outcome":{"kind":"allow","status":200,"streamed":true,"frames":1,"relayed_bytes":120}}`
	now := `{"events":[
{"seq":1,"family":"P","hook":"on_request","plugin":"mcp-parser","action":"continue"},
{"seq":2,"family":"P","hook":"on_response_frame","plugin":"guardrail","frame":0,"action":"reject","status":403},
{"seq":3,"family":"P","hook":"on_finish","plugin":"audit-log","action":"continue"}],
"outcome":{"kind":"allow","status":200,"streamed":true,"frames":1,"relayed_bytes":118},"warnings":["w"]}`
	got, err := DiffReports([]byte(golden), []byte(now), "golden", "now")
	if err != nil {
		t.Fatal(err)
	}
	want := `events: golden has 2, now 3
events seq 2 (on_response_frame, guardrail, frame 0) action: golden "continue", now "reject"
events seq 2 (on_response_frame, guardrail, frame 0) status: not in golden, now 403
events seq 3 (on_finish, audit-log): not in golden, now {"action":"continue","family":"P","hook":"on_finish","plugin":"audit-log","seq":3}
outcome.relayed_bytes: golden 120, now 118
warnings: not in golden, now ["w"]`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if d, _ := DiffReports([]byte(golden), []byte(golden), "golden", "now"); d != "" {
		t.Errorf("equal reports: %q", d)
	}
}

// TestSuiteDurations: each case's duration reaches the caller, so JUnit
// shows real times.
func TestSuiteDurations(t *testing.T) {
	res, err := RunSuite(t.Context(), SuiteOptions{Chain: "../../fixtures/inference/chain.yaml", Fixtures: "../../fixtures/inference", Golden: "../../fixtures/inference/golden", Factories: nil})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Duration <= 0 {
			t.Errorf("%s: duration %v", r.Name, r.Duration)
		}
	}
}
