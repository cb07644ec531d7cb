package hookbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/hooks"
)

// chainConfig is a six-hook submit chain and a six-reactor tool chain that
// mix every policy and decision; the concurrency test and the benchmarks
// share it.
func chainConfig(rec *trace.Recorder) Config {
	cfg := Config{Recorder: rec}
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("s%d", i)
		switch i {
		case 2: // fail-open and failing after an in-place change (H2)
			cfg.Submit = append(cfg.Submit, submitHook(id, i, hooks.PolicyFailOpen, func(_ context.Context, s *hooks.Submit) error {
				s.Model = "leaked"
				return errBoom
			}))
		case 4: // fail-open and succeeding
			cfg.Submit = append(cfg.Submit, submitHook(id, i, hooks.PolicyFailOpen, func(_ context.Context, s *hooks.Submit) error {
				s.SetMetadata("route", "eu")
				return nil
			}))
		default: // fail-closed, tagging
			cfg.Submit = append(cfg.Submit, submitHook(id, i, hooks.PolicyFailClosed, func(_ context.Context, s *hooks.Submit) error {
				s.SetMetadata(id, "ok")
				return nil
			}))
		}
	}
	decisions := []hooks.ToolFunc{
		decide(hooks.Pass()),
		decide(hooks.Rewrite(map[string]json.RawMessage{"arguments": raw(`{"q":"dogs"}`)})),
		decide(hooks.Rewrite(map[string]json.RawMessage{"colour": raw(`1`)})), // invalid: fail-open keeps the event
		func(_ context.Context, ev hooks.ToolEvent) (hooks.ToolDecision, error) {
			ev.Name += "_v2"
			return hooks.Replace(ev), nil
		},
		func(context.Context, hooks.ToolEvent) (hooks.ToolDecision, error) { return hooks.Pass(), errBoom },
		decide(hooks.Pass()),
	}
	for i, fn := range decisions {
		cfg.Tools = append(cfg.Tools, reactor(fmt.Sprintf("t%d", i), i, "", fn))
	}
	return cfg
}

// H1–H6 under concurrency: one bus serves many goroutines; each run gets
// the same result and the shared inputs are never written (run with -race).
func TestConcurrentRunsH1H2H5(t *testing.T) {
	rec := trace.NewRecorder()
	b := mustNew(t, chainConfig(rec))
	in := newSubmit()
	ev := startEvent()
	wantSubmit := newSubmit()
	for _, k := range []string{"s0", "s1", "s3", "s5"} {
		wantSubmit.Metadata[k] = "ok"
	}
	wantSubmit.Metadata["route"] = "eu"
	wantEvent := startEvent()
	wantEvent.Arguments, wantEvent.Name = raw(`{"q":"dogs"}`), "search_v2"

	const goroutines, runs = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < runs; i++ {
				sr, err := b.RunSubmit(context.Background(), in)
				if err != nil || !reflect.DeepEqual(sr.Submit, wantSubmit) || len(sr.Errors) != 1 {
					errs <- fmt.Errorf("submit run: %+v, %v", sr, err)
					return
				}
				tr, err := b.RunTool(context.Background(), ev)
				if err != nil || !reflect.DeepEqual(tr.Event, wantEvent) || len(tr.Errors) != 2 || !errors.Is(tr.Errors[0], ErrInvalidDecision) {
					errs <- fmt.Errorf("tool run: %+v, %v", tr, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, newSubmit()) || !reflect.DeepEqual(ev, startEvent()) {
		t.Fatal("shared inputs were modified")
	}
	if n := len(rec.Events()); n != goroutines*runs*12 {
		t.Fatalf("trace has %d events, want %d", n, goroutines*runs*12)
	}
}

func BenchmarkSubmitChain6(b *testing.B) {
	for _, traced := range []bool{false, true} {
		b.Run(fmt.Sprintf("trace=%v", traced), func(b *testing.B) {
			// Traced runs record each run into a fresh recorder, as a dry
			// run does; one recorder growing over b.N runs would measure
			// the slice growth instead.
			shared := mustNew(b, chainConfig(nil))
			in := newSubmit()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				bus := shared
				if traced {
					bus = shared.WithRecorder(trace.NewRecorder())
				}
				if _, err := bus.RunSubmit(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkToolChain6(b *testing.B) {
	for _, traced := range []bool{false, true} {
		b.Run(fmt.Sprintf("trace=%v", traced), func(b *testing.B) {
			// Traced runs record each run into a fresh recorder, as a dry
			// run does; one recorder growing over b.N runs would measure
			// the slice growth instead.
			shared := mustNew(b, chainConfig(nil))
			ev := startEvent()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				bus := shared
				if traced {
					bus = shared.WithRecorder(trace.NewRecorder())
				}
				if _, err := bus.RunTool(ctx, ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
