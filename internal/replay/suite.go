package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/junit"
	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/google/go-cmp/cmp"
)

// SuiteOptions configure a corpus replay.
type SuiteOptions struct {
	// Chain is the chain file; Fixtures the directory of *.fixture files;
	// Golden the directory of golden reports (NAME.json for NAME.fixture).
	Chain, Fixtures, Golden string
	// Factories are the in-process plugins the chain may name.
	Factories []gateway.Factory
	// Update rewrites every golden file (atomically) instead of comparing.
	Update bool
	// Rechunk also replays each streamed body in 1-byte and 2-byte chunks
	// and cut at every CR/LF, and fails when any trace differs from the
	// recorded chunking's.
	Rechunk bool
	// Parallel is the number of fixtures replayed at once; 0 means 1.
	Parallel int
	// Shard and Shards select the fixtures whose name hashes to shard
	// Shard of Shards (1-based); Shards 0 means all.
	Shard, Shards int
}

// CaseResult is one fixture's replay.
type CaseResult struct {
	Name string
	// Diff is the difference from the golden file, empty when equal.
	Diff string
	// Err is a fixture, chain or golden file that could not be used.
	Err error
	// Updated reports that --update changed the golden file (created it
	// or rewrote it with different content); an unchanged one is not.
	Updated bool
	// Orphan is the path of a golden file with no fixture; Diff then
	// says so. It fails the run: the fixture was renamed or deleted, and
	// the case it stood for is no longer replayed.
	Orphan   string
	Duration time.Duration
}

// Failed reports whether the case fails the run.
func (c CaseResult) Failed() bool { return c.Err != nil || c.Diff != "" }

// NoFixturesError reports a fixtures directory with no *.fixture file: a
// replay of nothing must not pass.
type NoFixturesError struct{ Dir string }

func (e *NoFixturesError) Error() string {
	return fmt.Sprintf("no fixtures in %s: the directory holds no *%s file; record some (abctl record, abctl fixture import) or fix the path", e.Dir, fixture.Ext)
}

// List returns the fixture files in dir, sorted, restricted to a shard.
// Hidden files (such as temporary files of an interrupted write) are
// skipped.
func List(dir string, shard, shards int) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, fixture.Ext) {
			continue
		}
		if shards > 0 && !InShard(n, shard, shards) {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	sort.Strings(out)
	return out, nil
}

// InShard reports whether the fixture named name belongs to shard i of n
// (1-based): an FNV-1a hash of the name modulo n, so a file stays in its
// shard when others are added.
func InShard(name string, i, n int) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32()%uint32(n)) == i-1
}

// GoldenPath returns the golden file of a fixture.
func GoldenPath(goldenDir, fixturePath string) string {
	return filepath.Join(goldenDir, strings.TrimSuffix(filepath.Base(fixturePath), fixture.Ext)+".json")
}

// chains builds each direction's chain once, on first use.
type chains struct {
	ctx  context.Context
	opts *SuiteOptions
	mu   sync.Mutex
	m    map[gateway.Direction]*Chain
	errs map[gateway.Direction]error
}

func (c *chains) get(dir gateway.Direction) (*Chain, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.m[dir]; ok {
		return ch, c.errs[dir]
	}
	ch, err := LoadChain(c.ctx, c.opts.Chain, dir, c.opts.Factories)
	c.m[dir], c.errs[dir] = ch, err
	return ch, err
}

func (c *chains) close() {
	for _, ch := range c.m {
		if ch != nil {
			_ = ch.Close(context.Background())
		}
	}
}

// RunSuite replays every fixture in opts.Fixtures through opts.Chain,
// opts.Parallel at a time. Each worker reads one fixture from disk, replays
// it and drops it, so memory is bounded by the fixtures in flight, not the
// corpus. Results are in fixture-name order.
func RunSuite(ctx context.Context, opts SuiteOptions) ([]CaseResult, error) {
	if opts.Shards < 0 || (opts.Shards > 0 && (opts.Shard < 1 || opts.Shard > opts.Shards)) {
		return nil, fmt.Errorf("shard %d/%d: want I/N with 1 <= I <= N", opts.Shard, opts.Shards)
	}
	all, err := List(opts.Fixtures, 0, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == opts.Fixtures && err.Error() == pe.Error() {
			// The caller names the directory; say it once.
			return nil, fmt.Errorf("fixtures: %w", pe.Err)
		}
		return nil, fmt.Errorf("fixtures: %w", err)
	}
	if len(all) == 0 {
		return nil, &NoFixturesError{Dir: opts.Fixtures}
	}
	var files []string
	for _, f := range all {
		if opts.Shards == 0 || InShard(filepath.Base(f), opts.Shard, opts.Shards) {
			files = append(files, f)
		}
	}
	orphans, err := orphanGoldens(opts, all)
	if err != nil {
		return nil, err
	}
	p := max(opts.Parallel, 1)
	cs := &chains{ctx: ctx, opts: &opts, m: map[gateway.Direction]*Chain{}, errs: map[gateway.Direction]error{}}
	defer cs.close()
	results := make([]CaseResult, len(files))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := &scratch{}
			for i := range jobs {
				results[i] = runCase(ctx, cs, &opts, files[i], sc)
			}
		}()
	}
	for i := range files {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	results = append(results, orphans...)
	sort.SliceStable(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	return results, nil
}

// orphanGoldens returns a failing result for each golden file (of the
// shard) that no fixture of all has.
func orphanGoldens(opts SuiteOptions, all []string) ([]CaseResult, error) {
	ents, err := os.ReadDir(opts.Golden)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("golden: %w", err)
	}
	have := map[string]bool{}
	for _, f := range all {
		have[strings.TrimSuffix(filepath.Base(f), fixture.Ext)] = true
	}
	var out []CaseResult
	for _, e := range ents {
		n := e.Name()
		name, ok := strings.CutSuffix(n, ".json")
		if e.IsDir() || strings.HasPrefix(n, ".") || !ok || have[name] {
			continue
		}
		if opts.Shards > 0 && !InShard(name+fixture.Ext, opts.Shard, opts.Shards) {
			continue
		}
		gp := filepath.Join(opts.Golden, n)
		out = append(out, CaseResult{Name: name, Orphan: gp,
			Diff: fmt.Sprintf("orphan golden: %s has no fixture %s; restore the fixture, or delete the golden file if the case is gone",
				gp, filepath.Join(opts.Fixtures, name+fixture.Ext))})
	}
	return out, nil
}

func runCase(ctx context.Context, cs *chains, opts *SuiteOptions, path string, sc *scratch) (cr CaseResult) {
	start := time.Now()
	cr.Name = strings.TrimSuffix(filepath.Base(path), fixture.Ext)
	// cr is the named result, so the duration reaches the caller (JUnit).
	defer func() { cr.Duration = time.Since(start) }()
	f, err := fixture.ReadFile(path)
	if err != nil {
		cr.Err = err
		return cr
	}
	dir, err := ParseDirection(f.Direction)
	if err != nil {
		cr.Err = fmt.Errorf("%s: %w", path, err)
		return cr
	}
	ch, err := cs.get(dir)
	if err != nil {
		cr.Err = err
		return cr
	}
	gp := GoldenPath(opts.Golden, path)
	if !opts.Update && !opts.Rechunk {
		// The common case, a comparison: events are compared with the
		// golden file as they happen, without building the report or
		// holding the file. A golden file that cannot be read, or a
		// difference, takes the full path below, which reports it as
		// before.
		if matchesGolden(ctx, ch.Chain, f, gp, sc) {
			return cr
		}
	}
	got := Run(ctx, ch.Chain, f, AsRecorded)
	got.zeroDurations()
	var diffs []string
	if opts.Rechunk && f.Response.Streamed() {
		for _, c := range []Chunking{Bytes1, Bytes2, AtLineEnds} {
			alt := Run(ctx, ch.Chain, f, c)
			alt.zeroDurations()
			if !reflect.DeepEqual(got, alt) {
				diffs = append(diffs, fmt.Sprintf("replayed in %s, the trace differs from the recorded chunks':\n%s", c, reportDiff(got, alt, "recorded chunks", "rechunked")))
			}
		}
	}
	if opts.Update {
		b, err := got.MarshalIndent()
		if err == nil {
			if old, rerr := os.ReadFile(gp); rerr == nil && bytes.Equal(old, b) {
				cr.Diff = strings.Join(diffs, "\n")
				return cr // unchanged: not reported as updated
			}
			err = fixture.WriteAtomic(gp, b)
		}
		cr.Err, cr.Updated = err, err == nil
		cr.Diff = strings.Join(diffs, "\n")
		return cr
	}
	data, err := limits.ReadFileMax(gp, "golden trace size", fixture.MaxFile(), "a golden trace is written by --update; re-create it", limits.Body.Env)
	if err != nil {
		cr.Err = fmt.Errorf("golden %s: %w (run with --update to create it)", gp, err)
		return cr
	}
	// Fast path: the golden file is the canonical encoding of an equal
	// report. Only a mismatch is decoded and explained with go-cmp (which
	// is reflective and slow), so formatting-only differences pass.
	if !got.EncodesTo(data) {
		var want Report
		if err := json.Unmarshal(data, &want); err != nil {
			cr.Err = fmt.Errorf("golden %s: %w", gp, err)
			return cr
		}
		if w := want.WithoutDurations(); !reflect.DeepEqual(w, got) {
			diffs = append([]string{fmt.Sprintf("trace differs from %s:\n%s", gp, reportDiff(w, got, "golden", "now"))}, diffs...)
		}
	}
	cr.Diff = strings.Join(diffs, "\n")
	return cr
}

// reportDiff explains how two reports differ in their golden JSON form
// (see [DiffReports]); go-cmp's form is the fallback should one not encode.
func reportDiff(want, got Report, wantName, gotName string) string {
	a, err1 := want.MarshalIndent()
	b, err2 := got.MarshalIndent()
	if err1 == nil && err2 == nil {
		if d, err := DiffReports(a, b, wantName, gotName); err == nil && d != "" {
			return d
		}
	}
	return cmp.Diff(want, got)
}

// Suite is one named set of results for JUnit output.
type Suite struct {
	Name    string
	Results []CaseResult
}

// JUnit encodes suites as JUnit XML: a fixture that could not run is an
// error, one whose trace differs from its golden a failure.
func JUnit(suites []Suite) ([]byte, error) {
	var js junit.Suites
	for _, s := range suites {
		su := junit.Suite{Name: s.Name}
		var total time.Duration
		for _, r := range s.Results {
			total += r.Duration
			c := junit.Case{Name: r.Name, Classname: s.Name, Time: junit.Seconds(r.Duration)}
			switch {
			case r.Err != nil:
				c.Error = &junit.Message{Message: firstLine(r.Err.Error()), Body: r.Err.Error()}
			case r.Diff != "":
				c.Failure = &junit.Message{Message: firstLine(r.Diff), Body: r.Diff}
			}
			su.Add(c)
		}
		su.Time = junit.Seconds(total)
		js.Suites = append(js.Suites, su)
	}
	var b bytes.Buffer
	if err := junit.Write(&b, js); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
