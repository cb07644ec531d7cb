package limits

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Real documents pass: every chain and catalog in the repository, and
// ordinary use of anchors.
func TestCheckYAMLAcceptsRealDocuments(t *testing.T) {
	var files []string
	for _, g := range []string{"../../fixtures/*/*.yaml", "../catalog/testdata/*.yaml", "../catalog/testdata/chains/*.yaml", "../../examples/*/*.yaml", "../../examples/*/*/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d documents found", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckYAML(f, data); err != nil {
			t.Errorf("%v", err)
		}
	}
	anchors := "base: &b {timeout: 5s, retries: 3}\ninbound:\n" + strings.Repeat("  - plugin: x\n    config: *b\n", 50)
	if err := CheckYAML("anchors.yaml", []byte(anchors)); err != nil {
		t.Error(err)
	}
	deep := "a:\n" + func() string {
		var b strings.Builder
		for i := range 90 {
			b.WriteString(strings.Repeat("  ", i+1) + "k:\n")
		}
		return b.String()
	}() + strings.Repeat("  ", 91) + "v\n"
	if err := CheckYAML("deep90.yaml", []byte(deep)); err != nil {
		t.Errorf("90 levels: %v", err)
	}
}

func TestCheckYAMLRefuses(t *testing.T) {
	bomb := "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for _, c := range "bcdefgh" {
		bomb += string(c) + ": &" + string(c) + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 10), ",") + "]\n"
		prev = string(c)
	}
	for _, tc := range []struct{ name, doc, limit string }{
		{"bomb", bomb, "YAML node count after alias expansion"},
		{"flow", strings.Repeat("[", 101), "YAML nesting depth"},
		{"flow maps", strings.Repeat("{a: ", 101), "YAML nesting depth"},
		{"block seq", strings.Repeat("- ", 101) + "x", "YAML nesting depth"},
		{"tokens", strings.Repeat(",", YAMLTokens+1), "YAML token count"},
	} {
		err := CheckYAML(tc.name, []byte(tc.doc))
		var le *Error
		if !errors.As(err, &le) || le.Limit != tc.limit {
			t.Errorf("%s: err %v, want the %q limit", tc.name, err, tc.limit)
		}
	}
}

func TestCheckJSONDepth(t *testing.T) {
	if err := CheckJSONDepth("ok", []byte(`{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"[[[","b":[[[1]]]}`+strings.Repeat(`"[[[["`, 500))); err != nil {
		t.Errorf("brackets in strings counted: %v", err)
	}
	if err := CheckJSONDepth("deep", []byte(strings.Repeat("[", JSONDepth+1))); !Is(err) {
		t.Errorf("err %v", err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("12345"), 0o644)
	if b, err := ReadFile(p, "test file size", 5, ""); err != nil || string(b) != "12345" {
		t.Fatalf("%q %v", b, err)
	}
	_, err := ReadFile(p, "test file size", 4, "make it smaller")
	if got := err.Error(); got != p+": test file size is 5 bytes, over the limit of 4 bytes (docs/limits.md); make it smaller" {
		t.Errorf("message %q", got)
	}
	if _, err := ReadFile("/dev/zero", "test file size", 4, ""); !Is(err) || !strings.Contains(err.Error(), "is over the limit of 4 bytes") {
		t.Errorf("/dev/zero: %v", err)
	}
	if b, err := ReadFile("/dev/null", "test file size", 4, ""); err != nil || len(b) != 0 {
		t.Errorf("/dev/null: %q %v", b, err)
	}
	if _, err := ReadFile(dir, "test file size", 4, ""); !errors.Is(err, ErrNotFile) {
		t.Errorf("dir: %v", err)
	}
}
