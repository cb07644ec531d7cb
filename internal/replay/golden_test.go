package replay_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/abkit/abkit/internal/replay"
)

// TestCanonicalGoldenForm: every golden report in the corpus decodes and
// encodes back to the same bytes, and EncodesTo (the replay fast path)
// agrees, including on a report that differs by one byte or is cut short.
func TestCanonicalGoldenForm(t *testing.T) {
	files, err := filepath.Glob("../../fixtures/*/golden/*.json")
	if err != nil || len(files) < 5 {
		t.Fatalf("golden files: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rep replay.Report
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		enc, err := rep.MarshalIndent()
		if err != nil || !bytes.Equal(enc, data) {
			t.Errorf("%s: re-encoding differs (err %v):\n%s", f, err, enc)
		}
		if !rep.EncodesTo(data) {
			t.Errorf("%s: EncodesTo = false on its own bytes", f)
		}
		if rep.EncodesTo(data[:len(data)-2]) || rep.EncodesTo(append(bytes.Clone(data), ' ')) {
			t.Errorf("%s: EncodesTo accepts a cut or extended golden", f)
		}
		changed := bytes.Clone(data)
		changed[len(changed)/2] ^= 1
		if rep.EncodesTo(changed) {
			t.Errorf("%s: EncodesTo accepts a changed byte", f)
		}
	}
}
