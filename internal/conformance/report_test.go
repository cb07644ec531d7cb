package conformance

import (
	"strings"
	"testing"
)

// TestReportGroupsFindings: identical findings of a case are printed once
// with a count and their places, in the text report and in JUnit; a
// finding made once names its place inline; a runtime run says "runtime
// stderr", and go-plugin's debug lines never reach either.
func TestReportGroupsFindings(t *testing.T) {
	boom := "failed: boom"
	rep := &Report{Kind: "runtime", Target: "./rt", Plugin: &Reported{Name: "rt"}, Results: []CaseResult{{
		ID: "P15/x", Rules: []string{"P15"}, Status: StatusFail,
		Failures: []Failure{
			{Rule: "P15", At: "exchange 1 of 3 (a, not streamed), on_request", Message: boom},
			{Rule: "P15", At: "exchange 2 of 3 (b, streamed, 2 frames), on_request", Message: boom},
			{Rule: "P16", At: "exchange 3 of 3 (c, not streamed), on_response", Message: boom},
		},
		Stderr: StripDebugLog("{\"@level\":\"debug\",\"@message\":\"plugin address\"}\nreal trouble\n{\"@level\":\"error\",\"@message\":\"kept\"}\n"),
	}}}
	var text, junit strings.Builder
	if err := WriteText(&text, rep, false, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	want := "    P15 (2 times): failed: boom\n" +
		"        at exchange 1 of 3 (a, not streamed), on_request\n" +
		"        at exchange 2 of 3 (b, streamed, 2 frames), on_request\n" +
		"    P16: exchange 3 of 3 (c, not streamed), on_response: failed: boom\n" +
		"    runtime stderr:\n      real trouble\n      {\"@level\":\"error\",\"@message\":\"kept\"}\n"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text report:\n%s\nwant it to hold:\n%s", text.String(), want)
	}
	if !strings.Contains(junit.String(), "P15 (2 times): failed: boom&#xA;  at exchange 1 of 3") || !strings.Contains(junit.String(), `message="P15: exchange 1 of 3 (a, not streamed), on_request: failed: boom"`) {
		t.Errorf("JUnit does not group the findings or name their place:\n%s", junit.String())
	}
	if strings.Contains(text.String()+junit.String(), "plugin address") {
		t.Error("go-plugin's debug line reached the report")
	}
}

func TestCallProblemWording(t *testing.T) {
	for in, want := range map[string]string{
		`plugin "p" failed in on_request: plugin "p": on_request: no answer within the deadline (call timeout 2s): context deadline exceeded`: "deadline overrun: no answer within the deadline (call timeout 2s); the plugin hung or was too slow, and the call was abandoned",
		`plugin "p" failed in on_response_frame: plugin "p": on_response_frame: plugin process exited (exit status 3)`:                        "the plugin process exited (exit status 3) during the call",
		`plugin "p" panicked in on_request: boom`: "panicked: boom",
		`something else`: "failed: something else",
	} {
		if got := callProblem(in); got != want {
			t.Errorf("callProblem(%q) = %q, want %q", in, got, want)
		}
	}
}
