package judge

import (
	"reflect"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
)

func TestByGroupKeepsOrderAndDropsEmpty(t *testing.T) {
	items := []string{"p1", "r1", "x1", "p2"}
	got := ByGroup([]string{SuiteRuntime, "none", SuitePlugin}, items, func(s string) string {
		switch s[0] {
		case 'p':
			return SuitePlugin
		case 'r':
			return SuiteRuntime
		}
		return "other"
	})
	want := []Group[string]{{Name: SuiteRuntime, Items: []string{"r1"}}, {Name: SuitePlugin, Items: []string{"p1", "p2"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ByGroup = %v, want %v", got, want)
	}
}

func TestExactlyMatchesOnlyTheID(t *testing.T) {
	re := Exactly("P2/caps.x")
	for id, want := range map[string]bool{"P2/caps.x": true, "P2/capsXx": false, "P2/caps.x/more": false, "xP2/caps.x": false} {
		if got := re.MatchString(id); got != want {
			t.Errorf("Exactly(P2/caps.x) on %q = %v, want %v", id, got, want)
		}
	}
}

func TestCitingNoCaseRunsNothing(t *testing.T) {
	reg := conformance.PluginSuite()
	for _, re := range Citing(reg, "no-such-rule") {
		for _, c := range reg.Cases() {
			if re.MatchString(c.ID) {
				t.Fatalf("Citing(no-such-rule) matches %s", c.ID)
			}
		}
	}
	var n int
	for _, re := range Citing(reg, "P2") {
		for _, c := range reg.Cases() {
			if re.MatchString(c.ID) {
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("Citing(P2) matches no plugin case")
	}
}

func TestEachRunsEveryJobWithinBound(t *testing.T) {
	const n, par = 20, 3
	done := make([]bool, n)
	running := make(chan struct{}, par) // full when par jobs run: one more finds no room
	Each(n, par, func(i int) {
		select {
		case running <- struct{}{}:
		default:
			t.Errorf("job %d ran while %d others did", i, par)
			return
		}
		done[i] = true
		<-running
	})
	for i, d := range done {
		if !d {
			t.Errorf("job %d did not run", i)
		}
	}
}
