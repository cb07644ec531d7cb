package replay_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// RunStream, writing each event through a ReportWriter as it comes, gives
// byte for byte the golden form of Run's report, for every fixture of the
// repository with its own chain.
func TestRunStreamMatchesRun(t *testing.T) {
	paths, _ := filepath.Glob("../../fixtures/*/*.fixture")
	if len(paths) < 5 {
		t.Fatalf("fixtures: %v", paths)
	}
	ctx := context.Background()
	for _, path := range paths {
		f, err := fixture.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := replay.ParseDirection(f.Direction)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := replay.LoadChain(ctx, filepath.Join(filepath.Dir(path), "chain.yaml"), dir, factories)
		if err != nil {
			t.Logf("%s: no chain for its direction: %v", path, err)
			continue
		}
		want := replay.Run(ctx, ch.Chain, f, replay.AsRecorded).WithoutDurations()
		wantJSON, err := want.MarshalIndent()
		if err != nil {
			t.Fatal(err)
		}
		s, err := fixture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		rw := replay.NewReportWriter(&got)
		rep, err := replay.RunStream(ctx, ch.Chain, s, func(e *trace.Event) error {
			e.DurationNS = 0
			return rw.Event(e)
		})
		s.Close()
		ch.Close(ctx)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if rep.Events != nil {
			t.Errorf("%s: RunStream's report holds %d events", path, len(rep.Events))
		}
		if err := rw.Finish(rep.Outcome, rep.Warnings); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), wantJSON) {
			t.Errorf("%s: streamed report differs from Run's:\n%s\nwant:\n%s", path, got.Bytes(), wantJSON)
		}
	}
}

// A sink that fails stops the run and its error is returned.
func TestRunStreamSinkError(t *testing.T) {
	ctx := context.Background()
	ch, err := replay.LoadChain(ctx, "../../fixtures/bigstream/chain.yaml", gateway.Outbound, factories)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close(ctx)
	s, err := fixture.Open("../../fixtures/bigstream/10k-events.fixture")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	boom := errors.New("disk full")
	n := 0
	_, err = replay.RunStream(ctx, ch.Chain, s, func(*trace.Event) error {
		n++
		if n == 100 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the sink's error", err)
	}
	if n != 100 {
		t.Errorf("sink called %d times after failing at 100", n)
	}
}
