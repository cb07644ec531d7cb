package conformance

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/trace"
)

// A plugin's stderr and messages reach the text report, JSON, JUnit and
// artifacts only through the redaction engine.
func TestReportsRedactPluginText(t *testing.T) {
	res := CaseResult{ID: "P1/x", Rules: []string{"P1"}, Status: StatusFail,
		Stderr:   "starting with api_key=SECRETKEY1\nAuthorization: Bearer abcdefgh12345678",
		Failures: []Failure{{Rule: "P1", Message: `plugin said {"password":"hunter two"}`}},
		Log:      []string{"outcome: reject token=SECRETTOKEN2 sk-ABCDEFGHIJKLMNOPQRST"},
		Trace:    []trace.Event{{Reason: "client_secret=SECRET3X"}},
	}
	redactResult(&res)
	rep := &Report{Target: "t", Plugin: &Reported{Name: "p"}, Results: []CaseResult{res}}
	var out bytes.Buffer
	if err := WriteJUnit(&out, rep); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(rep)
	out.Write(js)
	dir := t.TempDir()
	if err := WriteArtifacts(dir, rep); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out.Write(b)
		}
		return nil
	})
	for _, s := range []string{"SECRETKEY1", "abcdefgh12345678", "hunter two", "SECRETTOKEN2", "sk-ABCDEFGHIJKLMNOPQRST", "SECRET3X"} {
		if strings.Contains(out.String(), s) {
			t.Errorf("%q reached a report:\n%s", s, out.String())
		}
	}
}
