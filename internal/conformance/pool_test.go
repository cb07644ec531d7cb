package conformance_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/sdk"
)

type countedSubject struct {
	id     int
	closed atomic.Bool
}

func (s *countedSubject) Describe() *conformance.Descriptor {
	return &conformance.Descriptor{Name: "counted", Families: []string{"P"}}
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
// passed and retires it after one that failed; the report keeps the
// registry's order.
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
	want := map[string]int{"X1/case/0": 1, "X1/case/1": 1, "X1/case/2": 1, "X1/case/3": 2, "X1/case/4": 2, "X1/case/5": 2}
	for id, s := range want {
		if used[id] != s {
			t.Errorf("%s ran on subject %d; want %d (all used: %v)", id, used[id], s, used)
		}
	}
	if n := l.n.Load(); n != 2 {
		t.Errorf("%d launches; want 2 (the first, and one after the failure)", n)
	}
}
