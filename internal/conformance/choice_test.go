package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChoicePointsDocumented: every choice point and each of its
// alternatives is in docs/contracts.md's table, so what an author reads
// is what the suite judges.
func TestChoicePointsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "contracts.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range ChoicePoints() {
		i := strings.Index(string(doc), "| "+cp.ID+" |")
		if i < 0 {
			t.Errorf("docs/contracts.md has no row for choice %s", cp.ID)
			continue
		}
		row, _, _ := strings.Cut(string(doc[i:]), "\n")
		for _, a := range cp.Alternatives {
			if !strings.Contains(row, "`"+a.Name+"`") {
				t.Errorf("docs/contracts.md row %s does not name alternative %q", cp.ID, a.Name)
			}
		}
		if !strings.HasPrefix(cp.ID, cp.Rule+".") || cp.Alternatives[0].Name != cp.Reference {
			t.Errorf("choice %s: rule %s, reference %q first of %v", cp.ID, cp.Rule, cp.Reference, cp.Names())
		}
	}
}

// TestJudge: how a case is treated for each declaration, strict or not.
func TestJudge(t *testing.T) {
	rule := &Case{ID: "r"}
	ref := &Case{ID: "c", Choice: "P15.reject-status"}
	other := &Case{ID: "o", Choice: "P15.reject-status", Alternative: "as-given"}
	abkit := map[string]string{"P15.reject-status": "remap-403"}
	given := map[string]string{"P15.reject-status": "as-given"}
	bogus := map[string]string{"P15.reject-status": "sideways"}
	for _, tc := range []struct {
		name    string
		c       *Case
		decl    map[string]string
		strict  bool
		counted bool
		skip    bool
	}{
		{"rule", rule, nil, false, true, false},
		{"reference undeclared", ref, nil, false, false, false},
		{"reference declared", ref, abkit, false, true, false},
		{"reference, other declared", ref, given, false, false, true},
		{"reference strict", ref, given, true, true, false},
		{"other undeclared", other, nil, false, false, true},
		{"other declared", other, given, false, true, false},
		{"other strict", other, given, true, false, true},
		{"unknown alternative is undeclared", ref, bogus, false, false, false},
	} {
		j := Judge(tc.c, tc.decl, tc.strict)
		if j.Counted != tc.counted || (j.Skip != "") != tc.skip {
			t.Errorf("%s: counted %v skip %q; want counted %v skip %v", tc.name, j.Counted, j.Skip, tc.counted, tc.skip)
		}
	}
	if n := CheckAlternatives(bogus); len(n) != 1 || !strings.Contains(n[0], "sideways") {
		t.Errorf("CheckAlternatives(bogus) = %v; want one note naming it", n)
	}
}

// TestJudgedDiffers: a failure only of uncounted choice checks is a
// difference; a rule finding beside it fails the case.
func TestJudgedDiffers(t *testing.T) {
	c := &Case{ID: "r"}
	j := Judge(c, nil, false)
	onlyChoice := CaseResult{Status: StatusFail, Failures: []Failure{{Rule: "P19", Choice: "P19.frame", Message: "x"}}}
	if got := judged(onlyChoice, c, j, nil, false).Status; got != StatusDiffers {
		t.Errorf("only a choice finding: %s; want differs", got)
	}
	if got := judged(onlyChoice, c, j, map[string]string{"P19.frame": "data-payload"}, false).Status; got != StatusFail {
		t.Errorf("a declared choice's finding: %s; want fail", got)
	}
	if got := judged(onlyChoice, c, j, nil, true).Status; got != StatusFail {
		t.Errorf("strict: %s; want fail", got)
	}
	mixed := CaseResult{Status: StatusFail, Failures: []Failure{{Rule: "P19", Choice: "P19.frame"}, {Rule: "P20"}}}
	if got := judged(mixed, c, j, nil, false).Status; got != StatusFail {
		t.Errorf("a rule finding beside a choice one: %s; want fail", got)
	}
	if StatusDiffers.Bad() {
		t.Error("differs must not fail the run")
	}
}
