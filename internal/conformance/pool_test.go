package conformance_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/sdk"
)

type countedSubject struct {
	id     int
	closed atomic.Bool
	runs   atomic.Int32 // cases run on it
}

func (s *countedSubject) Describe() *conformance.Reported {
	return &conformance.Reported{Name: "counted", Families: []string{"P"}}
}
func (s *countedSubject) Plugin() sdk.Plugin { return sdk.Plugin{Name: "counted"} }
func (s *countedSubject) Stderr() string     { return "" }
func (s *countedSubject) Exited() error      { return nil }
func (s *countedSubject) Close() error       { s.closed.Store(true); return nil }

type countingLauncher struct{ n atomic.Int32 }

func (l *countingLauncher) Launch(context.Context) (conformance.Subject, error) {
	return &countedSubject{id: int(l.n.Add(1))}, nil
}
func (l *countingLauncher) Target() string { return "counted" }

// TestPoolIsolation: pool isolation reuses a subject after a case that
// passed and retires it after one that failed (a failure on a reused
// subject is run again on a fresh one, which fails too and is retired);
// the report keeps the registry's order.
func TestPoolIsolation(t *testing.T) {
	reg := conformance.NewRegistry()
	var mu sync.Mutex
	used := map[string]int{}
	for i := range 6 {
		id := fmt.Sprintf("X1/case/%d", i)
		reg.Add(&conformance.Case{ID: id, Rules: []string{"X1"}, Summary: id, Explain: "a case of the pool test", Run: func(ct *conformance.T) {
			s := ct.Subject().(*countedSubject)
			mu.Lock()
			used[id] = s.id
			mu.Unlock()
			if s.closed.Load() {
				ct.Errorf("X1", "got a closed subject")
			}
			if i == 2 {
				ct.Errorf("X1", "fails on purpose: its subject must be retired")
			}
		}})
	}
	l := &countingLauncher{}
	rep, err := conformance.Run(context.Background(), reg, l, conformance.Options{Parallel: 1, Isolation: conformance.IsolationPool})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rep.Results {
		if want := fmt.Sprintf("X1/case/%d", i); r.ID != want {
			t.Errorf("result %d is %s; want %s", i, r.ID, want)
		}
	}
	want := map[string]int{"X1/case/0": 1, "X1/case/1": 1, "X1/case/2": 2, "X1/case/3": 3, "X1/case/4": 3, "X1/case/5": 3}
	for id, s := range want {
		if used[id] != s {
			t.Errorf("%s ran on subject %d; want %d (all used: %v)", id, used[id], s, used)
		}
	}
	if rep.Results[2].Status != conformance.StatusFail {
		t.Errorf("X1/case/2 is %s; want fail", rep.Results[2].Status)
	}
	if n := l.n.Load(); n != 3 {
		t.Errorf("%d launches; want 3 (the first, the fresh run of the failure, one after it)", n)
	}
}

// TestPoolIsolationFreshVerdict: a case that fails only because of what an
// earlier case left in a reused subject passes on its run on a fresh
// subject, and that is its verdict; a case that fails on the subject that
// only answered Describe (fresh) is not run again.
func TestPoolIsolationFreshVerdict(t *testing.T) {
	reg := conformance.NewRegistry()
	var mu sync.Mutex
	runs := map[string][]int{}
	add := func(id string, fail func(s *countedSubject, runsOnIt int32) bool) {
		reg.Add(&conformance.Case{ID: id, Rules: []string{"X1"}, Summary: id, Explain: "a case of the pool test", Run: func(ct *conformance.T) {
			s := ct.Subject().(*countedSubject)
			mu.Lock()
			runs[id] = append(runs[id], s.id)
			mu.Unlock()
			if fail(s, s.runs.Add(1)) {
				ct.Errorf("X1", "fails on subject %d", s.id)
			}
		}})
	}
	add("X1/first-fails", func(*countedSubject, int32) bool { return true })
	add("X1/passes", func(*countedSubject, int32) bool { return false })
	add("X1/stale", func(_ *countedSubject, n int32) bool { return n > 1 }) // only on a used subject
	l := &countingLauncher{}
	rep, err := conformance.Run(context.Background(), reg, l, conformance.Options{Parallel: 1, Isolation: conformance.IsolationPool})
	if err != nil {
		t.Fatal(err)
	}
	st := map[string]conformance.Status{}
	for _, r := range rep.Results {
		st[r.ID] = r.Status
	}
	if st["X1/first-fails"] != conformance.StatusFail || st["X1/passes"] != conformance.StatusPass || st["X1/stale"] != conformance.StatusPass {
		t.Errorf("statuses %v; want first-fails to fail, passes and stale to pass", st)
	}
	if got := runs["X1/first-fails"]; len(got) != 1 {
		t.Errorf("first-fails ran on subjects %v; want once (its subject was fresh)", got)
	}
	if got := runs["X1/stale"]; len(got) != 2 || got[0] != got[1]-1 {
		t.Errorf("stale ran on subjects %v; want the reused one, then a fresh one", got)
	}
	if r := rep.Results[2]; len(r.Log) == 0 || !strings.Contains(r.Log[0], "fresh process") {
		t.Errorf("stale's log %q does not say it was run again on a fresh process", r.Log)
	}
}
