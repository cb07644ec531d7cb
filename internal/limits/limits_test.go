package limits

import (
	"errors"
	"fmt"
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
		// 1,500 aliases to one 400 KB string: few nodes, 600 MB decoded.
		{"string bomb", "s: &s " + strings.Repeat("x", 400_000) + "\nl: [" + strings.TrimSuffix(strings.Repeat("*s,", 1500), ",") + "]\n", "YAML size after alias expansion"},
		{"flow", strings.Repeat("[", 101), "YAML nesting depth"},
		{"flow maps", strings.Repeat("{a: ", 101), "YAML nesting depth"},
		{"block seq", strings.Repeat("- ", 101) + "x", "YAML nesting depth"},
		{"tokens", strings.Repeat(",", int(YAMLTokens.Default)+1), "YAML token count"},
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
	if err := CheckJSONDepth("deep", []byte(strings.Repeat("[", int(JSONDepth.Default)+1))); !Is(err) {
		t.Errorf("err %v", err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("12345"), 0o644)
	five := Bound{Env: "ABKIT_TEST_FIVE", Default: 5, Unit: "bytes"}
	four := Bound{Env: "ABKIT_TEST_FOUR", Default: 4, Unit: "bytes"}
	if b, err := ReadFile(p, "test file size", five, ""); err != nil || string(b) != "12345" {
		t.Fatalf("%q %v", b, err)
	}
	_, err := ReadFile(p, "test file size", four, "make it smaller")
	if got := err.Error(); got != p+": test file size is 5 bytes, over the limit of 4 bytes (docs/limits.md); make it smaller; or raise the limit: ABKIT_TEST_FOUR=1MiB" {
		t.Errorf("message %q", got)
	}
	if _, err := ReadFile("/dev/zero", "test file size", four, ""); !Is(err) || !strings.Contains(err.Error(), "is over the limit of 4 bytes") || !strings.Contains(err.Error(), "ABKIT_TEST_FOUR=") {
		t.Errorf("/dev/zero: %v", err)
	}
	if b, err := ReadFile("/dev/null", "test file size", four, ""); err != nil || len(b) != 0 {
		t.Errorf("/dev/null: %q %v", b, err)
	}
	if _, err := ReadFile(dir, "test file size", four, ""); !errors.Is(err, ErrNotFile) {
		t.Errorf("dir: %v", err)
	}
}

// TestRaiseWithEnv: each bound's variable raises it, and the error for a
// bound that was hit names the variable with a value the input fits in.
func TestRaiseWithEnv(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "chain.yaml")
	if err := os.WriteFile(p, make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(p, "chain file size", ChainFile, "")
	if err == nil || !strings.Contains(err.Error(), "or raise the limit: ABKIT_MAX_CHAIN_FILE=4MiB") {
		t.Fatalf("error %v, want it to say how to raise the limit", err)
	}
	t.Setenv("ABKIT_MAX_CHAIN_FILE", "4MiB")
	if b, err := ReadFile(p, "chain file size", ChainFile, ""); err != nil || len(b) != 3<<20 {
		t.Fatalf("with ABKIT_MAX_CHAIN_FILE=4MiB: %d bytes, %v", len(b), err)
	}

	deep := []byte("a: " + strings.Repeat("[", 150) + strings.Repeat("]", 150) + "\n")
	err = CheckYAML("deep.yaml", deep)
	if err == nil || !strings.Contains(err.Error(), "ABKIT_MAX_YAML_DEPTH=") {
		t.Fatalf("error %v, want it to name ABKIT_MAX_YAML_DEPTH", err)
	}
	t.Setenv("ABKIT_MAX_YAML_DEPTH", "200")
	if err := CheckYAML("deep.yaml", deep); err != nil {
		t.Errorf("with ABKIT_MAX_YAML_DEPTH=200: %v", err)
	}

	bomb := []byte("a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n")
	t.Setenv("ABKIT_MAX_YAML_NODES", "5000")
	if err := CheckYAML("bomb.yaml", bomb); err == nil || !strings.Contains(err.Error(), "ABKIT_MAX_YAML_NODES=") {
		t.Errorf("with ABKIT_MAX_YAML_NODES=5000: %v, want the node limit", err)
	}
	t.Setenv("ABKIT_MAX_YAML_NODES", "50000")
	if err := CheckYAML("bomb.yaml", bomb); err != nil {
		t.Errorf("with ABKIT_MAX_YAML_NODES=50000: %v", err)
	}
}

func TestParseValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		size bool
		want int64
	}{
		{"1048576", true, 1 << 20}, {"8MiB", true, 8 << 20}, {"512 KiB", true, 512 << 10}, {"2G", true, 2 << 30},
		{"300", false, 300}, {"4M", true, 4 << 20},
	} {
		if got, err := ParseValue(tc.in, tc.size); err != nil || got != tc.want {
			t.Errorf("ParseValue(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "0", "-1", "lots", "8MB", "9999999999G", "1.5MiB"} {
		if _, err := ParseValue(in, true); err == nil {
			t.Errorf("ParseValue(%q) accepted", in)
		}
	}
	if _, err := ParseValue("10KiB", false); err == nil {
		t.Error("a count with a size suffix accepted")
	}
}

func TestCheckEnv(t *testing.T) {
	if err := CheckEnv(); err != nil {
		t.Fatalf("unset: %v", err)
	}
	t.Setenv("ABKIT_MAX_HAR_FILE", "lots")
	err := CheckEnv()
	if err == nil || !strings.Contains(err.Error(), `ABKIT_MAX_HAR_FILE="lots"`) {
		t.Errorf("CheckEnv = %v, want the bad variable named", err)
	}
}

// TestDocsListEveryVariable: docs/limits.md's table names every variable
// that raises a bound, so users can find the one an error names.
func TestDocsListEveryVariable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/limits.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range All() {
		if !strings.Contains(string(doc), "`"+b.Env+"`") {
			t.Errorf("docs/limits.md does not list %s", b.Env)
		}
	}
}

// A size just over a bound that rounds to the same figure is given in
// exact bytes ("32.0 MiB, over the limit of 32.0 MiB" said nothing).
func TestErrorExactWhenRoundingHides(t *testing.T) {
	e := Body.Error("f", "body size", 32<<20+1000, "")
	if s := e.Error(); !strings.Contains(s, "33555432 bytes") || !strings.Contains(s, "33554432 bytes") {
		t.Errorf("%s", s)
	}
	e = Body.Error("f", "body size", 33<<20, "")
	if s := e.Error(); strings.Contains(s, "bytes)") || !strings.Contains(s, "is 33 MiB, over the limit of 32 MiB") {
		t.Errorf("%s", s)
	}
}

// A block mapping with more keys than YAMLKeys is refused from the lexer's
// tokens, naming the line where the count passed the bound, before the
// parser (quadratic in a mapping's keys: 60,000 took dryrun 85 s) runs.
// Keys of different mappings, nested or side by side, are counted apart.
func TestCheckYAMLKeysPerMapping(t *testing.T) {
	keys := func(n int, indent string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%sk%x: %d\n", indent, i, i%10)
		}
		return b.String()
	}
	big := "outbound:\n  - name: p\n    config:\n" + keys(60_000, "      ")
	err := CheckYAML("big.yaml", []byte(big))
	var le *Error
	if !errors.As(err, &le) || le.Limit != "keys in one YAML mapping" || !strings.Contains(err.Error(), "big.yaml:5004:") ||
		!strings.Contains(err.Error(), "ABKIT_MAX_YAML_KEYS=") {
		t.Fatalf("err %v", err)
	}
	// 4,000 keys in each of two sibling mappings, and in a nested one:
	// each mapping is under the bound.
	ok := "a:\n" + keys(4000, "  ") + "b:\n" + keys(4000, "  ") + "c:\n  d:\n" + keys(4000, "    ") + "  e: 1\n"
	if err := CheckYAML("ok.yaml", []byte(ok)); err != nil {
		t.Errorf("sibling mappings: %v", err)
	}
	seq := "l:\n" + strings.Repeat("  - a: 1\n    b: 2\n", 10_000)
	if err := CheckYAML("seq.yaml", []byte(seq)); err != nil {
		t.Errorf("10,000 small mappings in a sequence: %v", err)
	}
}
