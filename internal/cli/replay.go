package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/spf13/cobra"
)

// replayOpts are what `abctl replay` runs with: the flags and the SUITE
// arguments.
type replayOpts struct {
	chain, fixtures, golden, junit, shard string
	update, rechunk                       bool
	parallel                              int
	suites                                []string
}

func newReplayCmd(o *globalOpts) *cobra.Command {
	r := &replayOpts{}
	c := &cobra.Command{
		Use:   "replay (--chain CHAIN.yaml --fixtures DIR --golden DIR | SUITE...)",
		Short: "Replay recorded fixtures through a chain and compare with golden traces",
		Long: `Replay every fixture of a corpus through a chain on the reference runtime
and compare each report (trace with durations zeroed, outcome, warnings)
with its golden file. A difference is shown one line per changed value,
named by the golden file's JSON keys and, for a trace event, by its seq,
hook and plugin, followed by the command that accepts the new trace. A
golden file with no fixture is an "orphan golden" and fails the run (the
fixture was renamed or deleted). A suite with no fixtures fails with "no
fixtures in SUITE": replaying nothing is not a pass. The exit code is 1 on
any difference, orphan, empty suite or unusable fixture.

A SUITE is a directory holding chain.yaml, the *.fixture files and a
golden/ directory; it stands for --chain SUITE/chain.yaml --fixtures SUITE
--golden SUITE/golden.

  --update     write the golden files (atomically) instead of comparing;
               only the files whose content changed are reported
  --rechunk    also replay each streamed body in 1-byte and 2-byte chunks
               and cut at every CR/LF; fail when any trace differs
  --shard I/N  replay only the fixtures whose name hashes to shard I of N,
               so a CI matrix can spread the corpus over machines
  --junit FILE write JUnit XML for CI
  -p N         replay N fixtures at once; each is read from disk when its
               turn comes, so memory is bounded by N, not the corpus`,
		Example: "  abctl replay fixtures/*/\n  abctl replay --chain chain.yaml --fixtures recorded --golden golden --update\n  abctl replay --rechunk --shard 2/4 --junit replay.xml fixtures/*/",
		RunE: func(cmd *cobra.Command, args []string) error {
			r.suites = args
			return runReplay(cmd.Context(), o, r)
		},
	}
	f := c.Flags()
	f.StringVar(&r.chain, "chain", "", "chain file")
	f.StringVar(&r.fixtures, "fixtures", "", "directory of *.fixture files")
	f.StringVar(&r.golden, "golden", "", "directory of golden reports (NAME.json per NAME.fixture)")
	f.BoolVar(&r.update, "update", false, "rewrite golden files instead of comparing")
	f.BoolVar(&r.rechunk, "rechunk", false, "also replay streamed bodies in 1- and 2-byte chunks and cut at CR/LF")
	f.StringVar(&r.junit, "junit", "", "write JUnit XML to FILE")
	f.StringVar(&r.shard, "shard", "", "replay only shard I of N (I/N, 1-based)")
	f.IntVarP(&r.parallel, "parallel", "p", 4, "fixtures replayed at once")
	_ = c.RegisterFlagCompletionFunc("chain", completeYAML)
	return c
}

// replayTarget is one suite to replay, with how messages name it and the
// command that accepts its new traces.
type replayTarget struct {
	replay.SuiteOptions
	name, accept string
}

// targets turns the flags and SUITE arguments into the suites to replay.
func (r *replayOpts) targets(factories []gateway.Factory) ([]replayTarget, error) {
	base := replay.SuiteOptions{Factories: factories, Update: r.update, Rechunk: r.rechunk, Parallel: r.parallel}
	if r.shard != "" {
		i, n, err := parseShard(r.shard)
		if err != nil {
			return nil, usageErr(err)
		}
		base.Shard, base.Shards = i, n
	}
	var out []replayTarget
	if r.chain != "" || r.fixtures != "" || r.golden != "" {
		if r.chain == "" || r.fixtures == "" || r.golden == "" || len(r.suites) > 0 {
			return nil, usageErr(errors.New("give --chain, --fixtures and --golden together, or SUITE directories"))
		}
		s := base
		s.Chain, s.Fixtures, s.Golden = r.chain, r.fixtures, r.golden
		out = append(out, replayTarget{s, r.fixtures, fmt.Sprintf("abctl replay --update --chain %s --fixtures %s --golden %s", r.chain, r.fixtures, r.golden)})
	}
	for _, a := range r.suites {
		s := base
		s.Chain, s.Fixtures, s.Golden = filepath.Join(a, "chain.yaml"), a, filepath.Join(a, "golden")
		out = append(out, replayTarget{s, a, "abctl replay --update " + a})
	}
	if len(out) == 0 {
		return nil, usageErr(errors.New("nothing to replay: give SUITE directories or --chain, --fixtures and --golden"))
	}
	return out, nil
}

func runReplay(ctx context.Context, o *globalOpts, r *replayOpts) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	targets, err := r.targets(o.app.pipeline())
	if err != nil {
		return err
	}
	if r.update {
		for _, t := range targets {
			if err := os.MkdirAll(t.Golden, 0o755); err != nil {
				return readErr(err)
			}
		}
	}
	// In json and yaml the report is printed once at the end; the text
	// lines stream as each suite finishes.
	rr := &replayRun{o: o, update: r.update, text: format == "table", p: outPainter(o.app, o.noColor)}
	rr.rep.Suites = []replaySuiteReport{}
	for _, t := range targets {
		if err := rr.suite(ctx, t); err != nil {
			return err
		}
	}
	if r.junit != "" {
		b, err := replay.JUnit(rr.all)
		if err == nil {
			err = fixture.WriteAtomic(r.junit, b)
		}
		if err != nil {
			return readErr(fmt.Errorf("junit: %w", err))
		}
	}
	if rr.text {
		line := fmt.Sprintf("%d fixture(s), %d failed", rr.total, rr.failed)
		if r.update {
			line += fmt.Sprintf(", %d golden file(s) changed", rr.updated)
		}
		if rr.empty > 0 {
			line += fmt.Sprintf(", %d suite(s) with no fixtures", rr.empty)
		}
		fmt.Fprintln(o.app.Out, line)
	} else {
		rr.rep.Total, rr.rep.Failed, rr.rep.Updated = rr.total, rr.failed+rr.empty, rr.updated
		if err := writeData(o.app.Out, format, rr.rep); err != nil {
			return err
		}
	}
	if rr.failed > 0 || rr.empty > 0 {
		return &ExitError{Code: ExitFindings}
	}
	return nil
}

// replayRun gathers the results of a replay's suites as they finish.
type replayRun struct {
	o                             *globalOpts
	p                             painter
	update, text                  bool
	all                           []replay.Suite
	rep                           replayReport
	failed, total, updated, empty int
}

// suite replays one suite, prints its lines (text output) and adds it to
// the report.
func (rr *replayRun) suite(ctx context.Context, t replayTarget) error {
	o, p := rr.o, rr.p
	res, err := replay.RunSuite(ctx, t.SuiteOptions)
	var nf *replay.NoFixturesError
	if errors.As(err, &nf) {
		// Replaying nothing is a failure, not a pass; the other suites
		// still run.
		rr.empty++
		fmt.Fprintf(o.app.Err, "%s %v\n", p.red("ERROR"), err)
		rr.rep.Suites = append(rr.rep.Suites, replaySuiteReport{Name: filepath.Clean(t.Fixtures), Cases: []replayCaseReport{}, Error: "no fixtures in " + t.name})
		return nil
	}
	if err != nil {
		return readErr(fmt.Errorf("%s: %w", t.Fixtures, err))
	}
	rr.all = append(rr.all, replay.Suite{Name: filepath.Clean(t.Fixtures), Results: res})
	sr := replaySuiteReport{Name: filepath.Clean(t.Fixtures), Cases: []replayCaseReport{}}
	for _, r := range res {
		sr.Cases = append(sr.Cases, rr.result(t, r))
	}
	rr.rep.Suites = append(rr.rep.Suites, sr)
	return nil
}

// result counts and prints one fixture's result.
func (rr *replayRun) result(t replayTarget, r replay.CaseResult) replayCaseReport {
	o, p, text := rr.o, rr.p, rr.text
	if r.Orphan == "" {
		rr.total++
	}
	name := filepath.Join(filepath.Clean(t.Fixtures), r.Name+fixture.Ext)
	cr := replayCaseReport{Fixture: name}
	switch {
	case r.Err != nil:
		rr.failed++
		cr.Result, cr.Error = "error", r.Err.Error()
		if text {
			fmt.Fprintf(o.app.Out, "%s %s\n  %s\n", p.red("ERROR"), name, termsafe.String(r.Err.Error()))
		}
	case r.Orphan != "":
		rr.failed++
		cr.Fixture, cr.Golden = "", r.Orphan
		cr.Result, cr.Diff = "orphan", r.Diff
		if text {
			fmt.Fprintf(o.app.Out, "%s %s\n%s\n", p.red("ORPHAN"), r.Orphan, indent(r.Diff))
		}
	case r.Diff != "":
		rr.failed++
		cr.Result, cr.Diff = "fail", r.Diff
		if text {
			fmt.Fprintf(o.app.Out, "%s %s\n%s\n  accept the new trace: %s\n", p.red("FAIL"), name, termsafe.String(indent(r.Diff)), t.accept)
		}
	case r.Updated:
		rr.updated++
		cr.Result = "updated"
		if text {
			fmt.Fprintf(o.app.Out, "%s %s\n", p.yellow("updated"), replay.GoldenPath(t.Golden, name))
		}
	default:
		cr.Result = "ok"
		// --update reports only the golden files it changed.
		if text && !rr.update {
			fmt.Fprintf(o.app.Out, "%s %s\n", p.green("ok"), name)
		}
	}
	return cr
}

// replayReport is replay's -o json|yaml form. It holds no durations, so
// two runs over the same corpus print the same bytes.
type replayReport struct {
	Suites []replaySuiteReport `json:"suites"`
	Total  int                 `json:"total"`
	// Failed counts failing cases and suites with no fixtures.
	Failed int `json:"failed"`
	// Updated counts golden files --update changed.
	Updated int `json:"updated,omitempty"`
}

type replaySuiteReport struct {
	Name  string             `json:"name"`
	Cases []replayCaseReport `json:"cases"`
	// Error is "no fixtures in SUITE" for a suite with nothing to replay.
	Error string `json:"error,omitempty"`
}

type replayCaseReport struct {
	Fixture string `json:"fixture,omitempty"`
	// Golden is the golden file of an orphan.
	Golden string `json:"golden,omitempty"`
	// Result is ok, fail (a diff), error (unusable), orphan (a golden file
	// with no fixture) or updated (--update changed the golden file).
	Result string `json:"result"`
	Diff   string `json:"diff,omitempty"`
	Error  string `json:"error,omitempty"`
}

func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, such as 2/4", s)
	}
	return i, n, nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
