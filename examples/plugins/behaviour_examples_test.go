package plugins_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/builtin"
	"github.com/abkit/abkit/sdk/conformancetest"
)

// Every example plugin states what it is for in testdata/examples.yaml, and
// serves the same answers in-process as its binary recorded in the golden
// file (conformance run --plugin BIN --examples … runs them across the
// process boundary; the mutation run does too).
func TestBehaviourExamples(t *testing.T) {
	for _, p := range builtin.All() {
		dir := strings.ReplaceAll(p.Name, "-", "")
		file := filepath.Join(dir, "testdata", "examples.yaml")
		t.Run(p.Name, func(t *testing.T) {
			if _, err := os.Stat(file); err != nil {
				t.Fatalf("%s has no behaviour examples (%v): write %s and record its golden file with "+
					"conformance run --plugin bin/%s --examples %s --update-examples", p.Name, err, file, p.Name, file)
			}
			conformancetest.Run(t, p, conformancetest.Only(`^examples/`), conformancetest.Examples(file))
		})
	}
}
