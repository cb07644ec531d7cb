package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/trace"
)

func TestStartP12(t *testing.T) {
	tests := []struct {
		name    string
		failAt  string
		want    []string
		wantErr string
	}{
		{"all init in declaration order", "", []string{"a.init", "c.init", "d.init"}, ""},
		{"first error stops start-up", "c", []string{"a.init", "c.init"}, `P12: plugin "c": init: broken`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &recLog{}
			mk := func(n string, life bool) *fake {
				f := &fake{name: n, log: log, life: life}
				if n == tt.failAt {
					f.init = func(context.Context) error { return errors.New("broken") }
				}
				return f
			}
			rec := trace.NewRecorder()
			c := buildFakes(t, Options{Trace: rec}, mk("a", true), mk("b", false), mk("c", true), mk("d", true))
			err := c.Start(context.Background())
			if got := strings.Join(log.seq(), " "); got != strings.Join(tt.want, " ") {
				t.Errorf("calls %q, want %q", got, tt.want)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if len(rec.Events()) != len(tt.want) {
				t.Errorf("trace has %d events, want %d", len(rec.Events()), len(tt.want))
			}
			if c.Start(context.Background()) == nil { // P12: exactly once
				t.Error("second Start succeeded")
			}
			if n := len(log.seq("init")); n != len(tt.want) {
				t.Errorf("second Start called Init: %d calls", n)
			}
			// P13: only started plugins shut down.
			log2 := len(log.all())
			_ = c.Stop(context.Background())
			var shut []string
			for _, cl := range log.all()[log2:] {
				shut = append(shut, cl.plugin)
			}
			wantShut := "d c a"
			if tt.failAt == "c" {
				wantShut = "a"
			}
			if strings.Join(shut, " ") != wantShut {
				t.Errorf("shut down %v, want %s", shut, wantShut)
			}
		})
	}
}

func TestStopP13(t *testing.T) {
	log := &recLog{}
	release := make(chan struct{})
	defer close(release)
	var lateDeadline time.Duration
	a := &fake{name: "a", log: log, life: true, shutdown: func(ctx context.Context) error {
		d, _ := ctx.Deadline()
		lateDeadline = time.Until(d)
		return ctx.Err()
	}}
	b := &fake{name: "b", log: log, life: true, shutdown: func(ctx context.Context) error {
		<-release // overruns and ignores ctx
		return nil
	}}
	c := &fake{name: "c", log: log, life: true, shutdown: func(context.Context) error { return errors.New("disk gone") }}
	d := &fake{name: "d", log: log, life: true, shutdown: func(context.Context) error { panic("oops") }}
	ch := buildFakes(t, Options{Grace: 50 * time.Millisecond}, a, b, c, d)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := ch.Stop(ctx)
	if el := time.Since(start); el > 30*time.Second { // hang guard: b never returns
		t.Fatalf("Stop took %v", el)
	}
	if got := strings.Join(log.seq(), " "); got != "d.shutdown c.shutdown b.shutdown a.shutdown" {
		t.Fatalf("order %q", got)
	}
	for _, want := range []string{`"d"`, "panic: oops", `"c"`, "disk gone", `"b"`, ErrAbandoned.Error()} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Stop error %v does not mention %s", err, want)
		}
	}
	if !errors.Is(err, ErrAbandoned) {
		t.Error("abandoned shutdown not recognisable with errors.Is")
	}
	// a ran after Stop's deadline with a fresh grace deadline.
	if lateDeadline <= 0 || lateDeadline > 50*time.Millisecond {
		t.Errorf("late plugin got deadline %v from now, want within grace", lateDeadline)
	}
	if ch.Stop(context.Background()) != nil || len(log.all()) != 4 {
		t.Error("second Stop did something")
	}
}

func TestReadyP14(t *testing.T) {
	log := &recLog{}
	var mu sync.Mutex
	notReady := errors.New("warming up")
	state := notReady
	a := &fake{name: "a", log: log, life: true, ready: func(context.Context) error { mu.Lock(); defer mu.Unlock(); return state }}
	b := &fake{name: "b", log: log} // no behaviour: counts as ready
	c := buildFakes(t, Options{}, a, b)
	err := c.Ready(context.Background())
	if !errors.Is(err, notReady) || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("Ready = %v", err)
	}
	mu.Lock()
	state = nil
	mu.Unlock()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if err := c.Ready(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := testing.AllocsPerRun(100, func() { _ = c.Ready(context.Background()) }); n != 0 {
		t.Errorf("Ready allocates %v per call", n)
	}
	if err := buildFakes(t, Options{}, &fake{name: "x", log: log}).Ready(context.Background()); err != nil {
		t.Errorf("chain without readiness plugins: %v", err)
	}
}

// A plugin panicking in Ready is not ready, named; the host goes on (the
// runtime explorer found the panic taking the whole runtime down).
func TestReadyPanicP14(t *testing.T) {
	log := &recLog{}
	a := &fake{name: "a", log: log, life: true, ready: func(context.Context) error { panic("boom") }}
	c := buildFakes(t, Options{}, a)
	err := c.Ready(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"a"`) || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("Ready = %v; want a not-ready error naming a and the panic", err)
	}
}
