package mutation

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEnumerateOperators holds the operators to the sites of a small file:
// every operator fires where it should, guarded harness and recorder code is
// left alone, and every mutant parses and keeps the file's line count.
func TestEnumerateOperators(t *testing.T) {
	root := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "ops.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "ops"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "ops", "ops.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := Enumerate(root, []Target{{Suite: SuiteRuntime, Dir: "ops", Build: "./ops"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Key+" "+m.Desc)
		if _, err := parser.ParseFile(token.NewFileSet(), "m.go", m.src, 0); err != nil {
			t.Errorf("%s does not parse: %v\n%s", m.Key, err, m.src)
		}
		if bytes.Count(m.src, []byte("\n")) != bytes.Count(src, []byte("\n")) {
			t.Errorf("%s changed the line count", m.Key)
		}
	}
	want := []string{
		`ops/ops.go:const:const#1 5 → 6`,
		`ops/ops.go:f:const#1 0 → 1`,
		`ops/ops.go:f:loop#1 range xs backwards`,
		`ops/ops.go:f:cond#1 "<" → ">="`,
		`ops/ops.go:f:boundary#1 "<" → "<="`,
		`ops/ops.go:f:logic#1 "&&" → "||"`,
		`ops/ops.go:f:not#1 "!" removed`,
		`ops/ops.go:f:cond#2 "==" → "!="`,
		`ops/ops.go:f:const#2 3 → 4`,
		`ops/ops.go:f:stmt#1 removed n++`,
		`ops/ops.go:f:call#1 removed fmt.Println(…)`,
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("mutants:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	for _, m := range ms {
		if m.Op == OpLoop && !bytes.Contains(m.src, []byte(`package ops; import "slices"`)) {
			t.Errorf("the loop mutant does not import slices on the package line:\n%s", m.src)
		}
	}
}

func TestEquivalentList(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "eq.txt")
	os.WriteFile(p, []byte("# reviewed\na.go:f:cond#1  len(x) >= 0 is always true\n"), 0o644)
	l, err := LoadEquivalent(p)
	if err != nil {
		t.Fatal(err)
	}
	if why, ok := l.Reason("a.go:f:cond#1"); !ok || why != "len(x) >= 0 is always true" {
		t.Errorf("reason %q %v", why, ok)
	}
	if st := l.Stale([]*Mutant{{Key: "b.go:f:cond#1"}}); len(st) != 1 || !strings.Contains(st[0], "eq.txt:2") {
		t.Errorf("stale %v; want the entry with its line", st)
	}
	os.WriteFile(p, []byte("a.go:f:cond#1\n"), 0o644)
	if _, err := LoadEquivalent(p); err == nil || !strings.Contains(err.Error(), "eq.txt:1") {
		t.Errorf("an entry without a reason: %v; want an error naming the line", err)
	}
}

// TestRecorded holds killrates.json to being a whole record: both suites,
// consistent counts, and one survivor line per survived mutant, so the
// figures the self-test prints and the docs quote cannot drift apart.
func TestRecorded(t *testing.T) {
	rec, err := Recorded()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Command == "" || rec.Date == "" || len(rec.Summaries) != 2 {
		t.Fatalf("killrates.json: want a command, a date and both suites, got %+v", rec)
	}
	survived := 0
	for _, s := range rec.Summaries {
		if s.Killed+s.Survived+s.Equivalent+s.NotBuilt != s.Mutants {
			t.Errorf("%s: counts do not add up: %+v", s.Suite, s)
		}
		if n := s.Killed + s.Survived; n > 0 {
			if want := float64(s.Killed) * 100 / float64(n); s.Rate != want {
				t.Errorf("%s: kill rate %.2f, counts give %.2f", s.Suite, s.Rate, want)
			}
		}
		survived += s.Survived
	}
	if len(rec.Survivors) != survived {
		t.Errorf("%d survivor lines for %d survived mutants", len(rec.Survivors), survived)
	}
}
