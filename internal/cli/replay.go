package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/spf13/cobra"
)

func newReplayCmd(o *globalOpts) *cobra.Command {
	var chain, fixtures, golden, junit, shard string
	var update, rechunk bool
	var parallel int
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
			format, err := o.format()
			if err != nil {
				return err
			}
			var suites []replay.SuiteOptions
			base := replay.SuiteOptions{Factories: o.app.pipeline(), Update: update, Rechunk: rechunk, Parallel: parallel}
			if shard != "" {
				i, n, err := parseShard(shard)
				if err != nil {
					return usageErr(err)
				}
				base.Shard, base.Shards = i, n
			}
			if chain != "" || fixtures != "" || golden != "" {
				if chain == "" || fixtures == "" || golden == "" || len(args) > 0 {
					return usageErr(errors.New("give --chain, --fixtures and --golden together, or SUITE directories"))
				}
				s := base
				s.Chain, s.Fixtures, s.Golden = chain, fixtures, golden
				suites = append(suites, s)
			}
			for _, a := range args {
				s := base
				s.Chain, s.Fixtures, s.Golden = filepath.Join(a, "chain.yaml"), a, filepath.Join(a, "golden")
				suites = append(suites, s)
			}
			// How each suite is named in messages, and the command that
			// accepts its new traces.
			var suiteNames, acceptCmd []string
			if chain != "" {
				suiteNames = append(suiteNames, fixtures)
				acceptCmd = append(acceptCmd, fmt.Sprintf("abctl replay --update --chain %s --fixtures %s --golden %s", chain, fixtures, golden))
			}
			for _, a := range args {
				suiteNames = append(suiteNames, a)
				acceptCmd = append(acceptCmd, "abctl replay --update "+a)
			}
			if len(suites) == 0 {
				return usageErr(errors.New("nothing to replay: give SUITE directories or --chain, --fixtures and --golden"))
			}
			if update {
				for _, s := range suites {
					if err := os.MkdirAll(s.Golden, 0o755); err != nil {
						return readErr(err)
					}
				}
			}
			p := outPainter(o.app, o.noColor)
			var all []replay.Suite
			rep := replayReport{Suites: []replaySuiteReport{}}
			failed, total := 0, 0
			// In json and yaml the report is printed once at the end; the
			// text lines stream as each suite finishes.
			text := format == "table"
			updated, empty := 0, 0
			for si, s := range suites {
				res, err := replay.RunSuite(cmd.Context(), s)
				var nf *replay.NoFixturesError
				if errors.As(err, &nf) {
					// Replaying nothing is a failure, not a pass; the other
					// suites still run.
					empty++
					msg := "no fixtures in " + suiteNames[si]
					fmt.Fprintf(o.app.Err, "%s %v\n", p.red("ERROR"), err)
					rep.Suites = append(rep.Suites, replaySuiteReport{Name: filepath.Clean(s.Fixtures), Cases: []replayCaseReport{}, Error: msg})
					continue
				}
				if err != nil {
					return readErr(fmt.Errorf("%s: %w", s.Fixtures, err))
				}
				all = append(all, replay.Suite{Name: filepath.Clean(s.Fixtures), Results: res})
				sr := replaySuiteReport{Name: filepath.Clean(s.Fixtures), Cases: []replayCaseReport{}}
				for _, r := range res {
					if r.Orphan == "" {
						total++
					}
					name := filepath.Join(filepath.Clean(s.Fixtures), r.Name+fixture.Ext)
					cr := replayCaseReport{Fixture: name}
					switch {
					case r.Err != nil:
						failed++
						cr.Result, cr.Error = "error", r.Err.Error()
						if text {
							fmt.Fprintf(o.app.Out, "%s %s\n  %s\n", p.red("ERROR"), name, termsafe.String(r.Err.Error()))
						}
					case r.Orphan != "":
						failed++
						cr.Fixture, cr.Golden = "", r.Orphan
						cr.Result, cr.Diff = "orphan", r.Diff
						if text {
							fmt.Fprintf(o.app.Out, "%s %s\n%s\n", p.red("ORPHAN"), r.Orphan, indent(r.Diff))
						}
					case r.Diff != "":
						failed++
						cr.Result, cr.Diff = "fail", r.Diff
						if text {
							fmt.Fprintf(o.app.Out, "%s %s\n%s\n  accept the new trace: %s\n", p.red("FAIL"), name, termsafe.String(indent(r.Diff)), acceptCmd[si])
						}
					case r.Updated:
						updated++
						cr.Result = "updated"
						if text {
							fmt.Fprintf(o.app.Out, "%s %s\n", p.yellow("updated"), replay.GoldenPath(s.Golden, name))
						}
					default:
						cr.Result = "ok"
						// --update reports only the golden files it changed.
						if text && !update {
							fmt.Fprintf(o.app.Out, "%s %s\n", p.green("ok"), name)
						}
					}
					sr.Cases = append(sr.Cases, cr)
				}
				rep.Suites = append(rep.Suites, sr)
			}
			if junit != "" {
				b, err := replay.JUnit(all)
				if err == nil {
					err = fixture.WriteAtomic(junit, b)
				}
				if err != nil {
					return readErr(fmt.Errorf("junit: %w", err))
				}
			}
			if text {
				line := fmt.Sprintf("%d fixture(s), %d failed", total, failed)
				if update {
					line += fmt.Sprintf(", %d golden file(s) changed", updated)
				}
				if empty > 0 {
					line += fmt.Sprintf(", %d suite(s) with no fixtures", empty)
				}
				fmt.Fprintln(o.app.Out, line)
			} else {
				rep.Total, rep.Failed, rep.Updated = total, failed+empty, updated
				if err := writeData(o.app.Out, format, rep); err != nil {
					return err
				}
			}
			if failed > 0 || empty > 0 {
				return &ExitError{Code: ExitFindings}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&chain, "chain", "", "chain file")
	f.StringVar(&fixtures, "fixtures", "", "directory of *.fixture files")
	f.StringVar(&golden, "golden", "", "directory of golden reports (NAME.json per NAME.fixture)")
	f.BoolVar(&update, "update", false, "rewrite golden files instead of comparing")
	f.BoolVar(&rechunk, "rechunk", false, "also replay streamed bodies in 1- and 2-byte chunks and cut at CR/LF")
	f.StringVar(&junit, "junit", "", "write JUnit XML to FILE")
	f.StringVar(&shard, "shard", "", "replay only shard I of N (I/N, 1-based)")
	f.IntVarP(&parallel, "parallel", "p", 4, "fixtures replayed at once")
	_ = c.RegisterFlagCompletionFunc("chain", completeYAML)
	return c
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
