// Package cli holds the conformance command's cobra commands: list,
// explain and run. Commands write results to the App's Out and messages to
// its Err, so tests run them in-process.
//
// Exit codes: 0 every case passed (known failures included), 1 failures
// or stale baseline entries, 2 usage, 3 the plugin could not be started.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/buildinfo"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/conformance/runtimesuite"
	"github.com/abkit/abkit/internal/exitcode"
	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
	ExitLoad  = 3
)

// App is what commands run against.
type App struct {
	Out, Err io.Writer
	// Version, Commit and Date identify a release build (set at link
	// time); empty, they come from what Go stamped into the binary.
	Version, Commit, Date string
	// Groups, if set, tracks every plugin and runtime process group, so
	// that a second SIGINT or SIGTERM can kill them all at once.
	Groups *pluginhost.Groups
}

// ExitError carries an exit code; a nil Err means the output already said
// everything, so nothing more is printed.
type ExitError = exitcode.Error

func usage(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// baselineErr is a usage error, or exit 3 for a file over a limit.
func baselineErr(err error) error {
	if limits.Is(err) {
		return &ExitError{Code: ExitLoad, Err: err}
	}
	return usage(err)
}

// ExitCode maps a command error to the exit code.
func ExitCode(err error) int {
	var ee *ExitError
	var le *conformance.LoadError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &le), limits.Is(err):
		return ExitLoad
	}
	return ExitUsage
}

// MainWithSignals is conformance's main: Main with SIGINT and SIGTERM
// handled alike (see internal/interrupt): the first cancels the run and
// stops every plugin process, the second kills their process groups and
// exits at once.
func MainWithSignals(app *App, args []string) int {
	if app.Groups == nil {
		app.Groups = pluginhost.NewGroups()
	}
	return exitcode.WithSignals(app.Groups, func(ctx context.Context) int { return Main(ctx, app, args) })
}

// Main runs the command line and returns the exit code. A run a signal
// cut short prints its results so far.
func Main(ctx context.Context, app *App, args []string) int {
	root := NewRoot(app)
	root.SetArgs(args)
	return exitcode.Main(ctx, app.Err, exitcode.Program{
		Prefix: "conformance:",
		Help:   "conformance --help",
		Usage:  ExitUsage,
		Code:   ExitCode,
	}, func() error { return root.ExecuteContext(ctx) })
}

// NewRoot builds the command tree.
func NewRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "conformance",
		Short: "Check, rule by rule, that a plugin honours the abkit contracts",
		Long: `conformance runs abkit's conformance suites. In the plugin suite the
binary under test is a plugin of any family (P, D, H) and conformance plays
the host with abkit's reference runtimes.

Exit codes: 0 every case passed (known failures included), 1 failures or
stale baseline entries, 2 usage, 3 the plugin could not be started.`,
		Example:           "  conformance run --plugin ./bin/my-plugin\n  conformance list --rules\n  conformance explain P21/last-exactly-once/zero-frames",
		SilenceUsage:      true,
		SilenceErrors:     true,
		DisableAutoGenTag: true,
	}
	root.SetOut(app.Out)
	root.SetErr(app.Err)
	root.Version = buildinfo.Read(app.Version, app.Commit, app.Date).String()
	root.SetVersionTemplate("conformance {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage(err) })
	root.AddCommand(newListCmd(app), newExplainCmd(app), newRunCmd(app), newSelftestCmd(app), newVersionCmd(app), newMutateCmd(app))
	return root
}

func suite(name string) (*conformance.Registry, error) {
	switch name {
	case "plugin":
		return conformance.PluginSuite(), nil
	case "runtime":
		return runtimesuite.Suite(), nil
	}
	return nil, usage(fmt.Errorf("unknown suite %q; the suites are: plugin, runtime", name))
}

func newListCmd(app *App) *cobra.Command {
	var suiteName, output string
	var rules bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the cases, or with --rules the rule coverage table",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := suite(suiteName)
			if err != nil {
				return err
			}
			if output != "text" && output != "json" {
				return usage(fmt.Errorf("output format %q: want text or json", output))
			}
			if rules {
				cov := conformance.Coverage(reg)
				if suiteName == "runtime" {
					cov = runtimesuite.Coverage() // the runtime suite owes other rules and states its own reasons
				}
				if output == "json" {
					return writeJSON(app.Out, cov)
				}
				writeCoverage(app.Out, cov)
				return nil
			}
			cases := reg.Cases()
			if output == "json" {
				type listed struct {
					*conformance.Case
					Kind conformance.Kind `json:"kind"`
				}
				out := make([]listed, len(cases))
				for i, c := range cases {
					out[i] = listed{c, c.Kind()}
				}
				return writeJSON(app.Out, out)
			}
			for _, c := range cases {
				kind := string(c.Kind())
				if c.Choice != "" {
					kind += " " + c.Choice
				}
				fmt.Fprintf(app.Out, "%-42s %-14s %-26s %s\n", c.ID, strings.Join(c.Rules, ","), kind, c.Summary)
			}
			return nil
		},
	}
	c.Flags().StringVar(&suiteName, "suite", "plugin", "suite to list")
	c.Flags().BoolVar(&rules, "rules", false, "print every rule with the suite's cases that check it, or why the suite does not check it")
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return c
}

// writeCoverage prints the rule table: each rule's cases, or why none,
// then its choice points with abkit's alternative, the allowed others and
// the cases that check each.
func writeCoverage(w io.Writer, cov []conformance.RuleCoverage) {
	for _, r := range cov {
		if len(r.Cases) > 0 {
			fmt.Fprintf(w, "%-4s rule   %s\n", r.Rule, strings.Join(r.Cases, ", "))
		} else {
			fmt.Fprintf(w, "%-4s rule   not checked: %s\n", r.Rule, r.Reason)
		}
		for _, c := range r.Choices {
			fmt.Fprintf(w, "     choice %s: %s\n", c.ID, c.Summary)
			for _, a := range c.Alternatives {
				mark := "allowed"
				if a.Name == c.Reference {
					mark = "abkit  "
				}
				checked := "not checked: declaring it skips the choice's cases"
				switch ids := c.Cases[a.Name]; {
				case len(ids) > 0:
					checked = strings.Join(ids, ", ")
				case c.Followed:
					checked = "the rule's cases follow it"
				}
				fmt.Fprintf(w, "            %s %s: %s [%s]\n", mark, a.Name, a.Summary, checked)
			}
		}
	}
}

func newExplainCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:     "explain CASE",
		Short:   "Say what a case of either suite does, which rules it checks, and how to fix a failure",
		Example: "  conformance explain P21/last-exactly-once/zero-frames\n  conformance explain P15/order/6-plugins/allow",
		Args:    cobra.ExactArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return caseCompletions(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			var found int
			var near []string
			// Both suites are searched: a case ID does not say which suite
			// it belongs to, and an ID in both is explained twice.
			for _, name := range []string{"plugin", "runtime"} {
				reg, _ := suite(name)
				if c, ok := reg.Case(id); ok {
					if found > 0 {
						fmt.Fprintln(app.Out)
					}
					found++
					fmt.Fprintf(app.Out, "%s\nsuite: %s\nrules: %s\nkind: %s\n%s\n\n%s\n", c.ID, name, strings.Join(c.Rules, ", "), kindLine(c), c.Summary, c.Explain)
					continue
				}
				for _, x := range reg.Cases() {
					if strings.Contains(x.ID, id) || strings.HasPrefix(id, strings.SplitN(x.ID, "/", 2)[0]+"/") {
						near = append(near, x.ID+" ("+name+")")
					}
				}
			}
			if found > 0 {
				return nil
			}
			msg := fmt.Sprintf("no case %q in the plugin or runtime suite", id)
			switch {
			case len(near) > maxNear:
				msg += fmt.Sprintf("; did you mean: %s, … (%d more; run 'conformance list --suite plugin' or 'conformance list --suite runtime')",
					strings.Join(near[:maxNear], ", "), len(near)-maxNear)
			case len(near) > 0:
				msg += "; did you mean: " + strings.Join(near, ", ")
			default:
				msg += "; run 'conformance list --suite plugin' or 'conformance list --suite runtime' for the cases"
			}
			return usage(errors.New(msg))
		},
	}
}

// kindLine says whether a case checks a rule or one alternative of a
// choice, and which others the contract allows.
func kindLine(c *conformance.Case) string {
	if c.Choice == "" {
		return "rule (the contract's source requires it; a failure is a fault)"
	}
	cp, _ := conformance.ChoicePointByID(c.Choice)
	alt := c.Alternative
	if alt == "" {
		alt = cp.Reference
	}
	return fmt.Sprintf("choice %s (%s): checks %s; allowed: %s; a failure counts only when the implementation declares %s or the run is --strict",
		cp.ID, cp.Summary, alt, strings.Join(cp.Names(), ", "), alt)
}

// maxNear caps the did-you-mean list of explain.
const maxNear = 8

type runOpts struct {
	plugin, reattach       string
	pluginArgs             []string
	runtime                string
	run, skip              []string
	knownFailing, knownFlk string
	parallel               int
	timeout                time.Duration
	isolation, junit, out  string
	artifacts              string
	trace, verbose         bool
	strict                 bool
	examples               string
	updateExamples         bool
	x                      exploreOpts
}

func newRunCmd(app *App) *cobra.Command {
	o := &runOpts{}
	c := &cobra.Command{
		Use:   "run (--plugin BIN | --reattach CONFIG)",
		Short: "Run the plugin suite against a plugin binary, or one you started yourself (--reattach)",
		Example: `  conformance run --plugin ./bin/guardrail
  conformance run --plugin ./bin/guardrail --run '^P2[0-9]/' -p 1 --trace
  conformance run --plugin ./bin/guardrail --known-failing baseline.txt --junit report.xml
  ABKIT_PLUGIN_DEBUG=1 ./bin/guardrail > reattach.json &   # or under dlv
  conformance run --reattach reattach.json
  conformance run --runtime ./bin/my-runtime --explore 200 --seed 7
  conformance run --runtime ./bin/my-runtime --scenario /tmp/conformance-explore-7-12.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.runtime != "" && cmd.Flags().Changed("explore") || o.x.scenario != "" {
				o.x.seedSet = cmd.Flags().Changed("seed")
				return runExplore(cmd.Context(), app, o)
			}
			if cmd.Flags().Changed("seed") && !cmd.Flags().Changed("explore") || o.x.reference != "" {
				return usage(errors.New("--seed goes with --explore N, --reference with --runtime and --explore N or --scenario FILE"))
			}
			return o.exec(cmd.Context(), app, cmd.Flags().Changed("isolation") && o.isolation == string(conformance.IsolationCase))
		},
	}
	f := c.Flags()
	f.StringVar(&o.plugin, "plugin", "", "plugin to test: a binary or script path, a program name looked up in PATH (with --plugin-arg), or a NAME.abkit.json manifest naming a command line")
	f.StringArrayVar(&o.pluginArgs, "plugin-arg", nil, "argument given to the --plugin program (repeatable), for interpreted plugins: --plugin python3 --plugin-arg plugin.py")
	f.StringVar(&o.runtime, "runtime", "", "runtime binary to test with the runtime suite (proto/abkit/v1/runtime.proto)")
	f.StringVar(&o.reattach, "reattach", "", "go-plugin reattach config (JSON, or a file holding it) of a plugin you started yourself")
	f.StringArrayVar(&o.run, "run", nil, "run only cases whose ID matches this regexp (repeatable)")
	f.StringArrayVar(&o.skip, "skip", nil, "skip cases whose ID matches this regexp (repeatable)")
	f.StringVar(&o.knownFailing, "known-failing", "", "baseline file of cases expected to fail")
	f.StringVar(&o.knownFlk, "known-flaky", "", "baseline file of cases retried up to 3 times")
	f.IntVarP(&o.parallel, "parallel", "p", 0, "cases run at once (default GOMAXPROCS)")
	f.DurationVar(&o.timeout, "timeout", conformance.DefaultTimeout, "timeout of each case")
	// Pool by default: a process per case costs more than the cases (an
	// interpreted plugin's start is 100-150 ms), and a failure on a reused
	// process is run again on a fresh one, so carried state never decides
	// a verdict.
	f.StringVar(&o.isolation, "isolation", string(conformance.IsolationPool), "pool: at most -p processes, each reused by the next case after a case that passed, and a case that fails on a reused process run again on a fresh one; case: a fresh process for every case; suite: one shared process (always suite with --reattach)")
	f.StringVar(&o.junit, "junit", "", "also write a JUnit XML report to FILE")
	f.StringVarP(&o.out, "output", "o", "text", "output format: text or json")
	f.StringVar(&o.artifacts, "artifacts", "", "keep each case's trace, log and plugin stderr under DIR")
	f.BoolVar(&o.trace, "trace", false, "print every call of every case with relative timestamps")
	f.BoolVar(&o.strict, "strict", false, "judge every choice as abkit's reference takes it, whatever the implementation declares: its differences then fail the run")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "list passing cases too, and keep go-plugin's debug log lines in the plugin stderr of failures and JUnit")
	f.StringVar(&o.examples, "examples", "", "also run the plugin's behaviour examples in FILE (YAML), each as case examples/NAME, against FILE's golden file")
	f.BoolVar(&o.updateExamples, "update-examples", false, "with --examples: record what the plugin answered as the golden file instead of comparing")
	f.IntVar(&o.x.n, "explore", 0, "instead of the cases: with --runtime, run N generated scenarios on the runtime and on abkit's reference and report each difference shrunk; with --plugin, drive N generated exchanges through the axes and monitors and print the shrunk sequence of a finding")
	f.Uint64Var(&o.x.seed, "seed", 0, "with --explore: the generator's seed (default: from the clock; printed, so a run can be repeated with the same scenarios or exchanges)")
	f.StringVar(&o.x.scenario, "scenario", "", "with --runtime: replay one scenario file (written by --explore) on the runtime and on abkit's reference")
	f.StringVar(&o.x.reference, "reference", "", "with --explore or --scenario: abkit's reference runtime binary (default: abkit-runtime next to conformance, or in PATH)")
	ids := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return caseCompletions(), cobra.ShellCompDirectiveNoFileComp
	}
	_ = c.RegisterFlagCompletionFunc("run", ids)
	_ = c.RegisterFlagCompletionFunc("skip", ids)
	_ = c.RegisterFlagCompletionFunc("isolation", cobra.FixedCompletions([]cobra.Completion{
		cobra.CompletionWithDesc(string(conformance.IsolationCase), "a fresh plugin process per case"),
		cobra.CompletionWithDesc(string(conformance.IsolationSuite), "one shared process for the run"),
		cobra.CompletionWithDesc(string(conformance.IsolationPool), "processes reused between cases that pass"),
	}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// caseCompletions are the case IDs of both suites, each with its summary.
func caseCompletions() []cobra.Completion {
	var out []cobra.Completion
	seen := map[string]bool{}
	for _, reg := range []*conformance.Registry{conformance.PluginSuite(), runtimesuite.Suite()} {
		for _, c := range reg.Cases() {
			if !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, cobra.CompletionWithDesc(c.ID, c.Summary))
			}
		}
	}
	return out
}

func (o *runOpts) exec(ctx context.Context, app *App, explicitCase bool) error {
	opts, err := o.options()
	if err != nil {
		return err
	}
	dir, err := o.resolvePlugin()
	if err != nil {
		return err
	}
	hopts := pluginhost.Options{CallTimeout: o.timeout, Groups: app.Groups, Args: o.pluginArgs, Dir: dir}
	reg, examples, observed, err := o.suite()
	if err != nil {
		return err
	}
	var l conformance.Launcher
	switch {
	case o.runtime != "":
		l, reg = runtimesuite.Launcher{Path: o.runtime, Groups: app.Groups}, runtimesuite.Suite()
	case o.plugin != "":
		l = conformance.Binary(o.plugin, hopts)
	default:
		cfg, err := conformance.ParseReattach(o.reattach)
		if err != nil {
			return usage(err)
		}
		if explicitCase {
			return usage(errors.New("--isolation case needs a fresh process per case, and with --reattach there is only the one you started: drop --isolation (it is suite with --reattach) or use --plugin BIN"))
		}
		// The runner switches to suite isolation and says so in the report.
		l = conformance.Reattach(cfg, hopts)
	}
	if o.trace {
		opts.OnResult = nil
	}
	rep, err := conformance.Run(ctx, reg, l, opts)
	if err != nil {
		var le *conformance.LoadError
		if errors.As(err, &le) && o.reattach == "" {
			if hint := wrongKind(ctx, o, hopts); hint != "" {
				return &ExitError{Code: ExitLoad, Err: errors.New(hint)}
			}
		}
		return err
	}
	if err := o.write(app, rep, examples, observed); err != nil {
		return err
	}
	if !rep.OK() {
		return &ExitError{Code: ExitFail}
	}
	return nil
}

// options checks the run's flags and makes the runner's options of them.
func (o *runOpts) options() (conformance.Options, error) {
	if n := btoi(o.plugin != "") + btoi(o.reattach != "") + btoi(o.runtime != ""); n != 1 {
		return conformance.Options{}, usage(errors.New("give exactly one of --plugin BIN, --runtime BIN and --reattach CONFIG"))
	}
	if o.out != "text" && o.out != "json" {
		return conformance.Options{}, usage(fmt.Errorf("output format %q: want text or json", o.out))
	}
	iso := conformance.Isolation(o.isolation)
	if iso != conformance.IsolationCase && iso != conformance.IsolationSuite && iso != conformance.IsolationPool {
		return conformance.Options{}, usage(fmt.Errorf("isolation %q: want case, suite or pool", o.isolation))
	}
	if o.parallel < 0 || o.timeout <= 0 {
		return conformance.Options{}, usage(errors.New("-p must be at least 0 and --timeout positive"))
	}
	opts := conformance.Options{Parallel: o.parallel, Timeout: o.timeout, Isolation: iso, DebugLog: o.verbose, Strict: o.strict}
	var err error
	if opts.Run, err = compile(o.run, "--run"); err != nil {
		return opts, err
	}
	if opts.Skip, err = compile(o.skip, "--skip"); err != nil {
		return opts, err
	}
	if o.knownFailing != "" {
		if opts.KnownFailing, err = conformance.LoadBaseline(o.knownFailing); err != nil {
			return opts, baselineErr(err)
		}
	}
	if o.knownFlk != "" {
		if opts.KnownFlaky, err = conformance.LoadBaseline(o.knownFlk); err != nil {
			return opts, baselineErr(err)
		}
	}
	return opts, nil
}

// resolvePlugin turns --plugin into the program to start: a manifest
// (NAME.abkit.json) gives its command line and the folder to run it in.
func (o *runOpts) resolvePlugin() (dir string, err error) {
	if len(o.pluginArgs) > 0 && o.plugin == "" {
		return "", usage(errors.New("--plugin-arg is an argument of the --plugin program; give --plugin too"))
	}
	if strings.HasSuffix(o.plugin, catalog.ManifestSuffix) {
		// A manifest (NAME.abkit.json): its command line, as dir: runs it.
		cmd, _, err := catalog.ReadManifest(o.plugin)
		if err != nil {
			return "", &ExitError{Code: ExitLoad, Err: err}
		}
		o.plugin, dir = cmd.Argv[0], cmd.Dir
		o.pluginArgs = append(cmd.Argv[1:], o.pluginArgs...)
	}
	if o.plugin != "" {
		if o.plugin, err = pluginProgram(o.plugin); err != nil {
			return "", &ExitError{Code: ExitLoad, Err: err}
		}
	}
	return dir, nil
}

// suite is the plugin suite to run: the cases with the behaviour
// examples of --examples (observed collects what each example saw), or
// the exploration of --explore. The runtime suite replaces it for
// --runtime.
func (o *runOpts) suite() (reg *conformance.Registry, examples *conformance.ExamplesFile, observed map[string][]json.RawMessage, err error) {
	reg = conformance.PluginSuite()
	if o.updateExamples && o.examples == "" {
		return nil, nil, nil, usage(errors.New("--update-examples needs --examples FILE"))
	}
	observed = map[string][]json.RawMessage{}
	if o.examples != "" {
		if o.runtime != "" {
			return nil, nil, nil, usage(errors.New("--examples is for plugins (--plugin or --reattach); the runtime suite has no examples"))
		}
		if examples, err = conformance.LoadExamples(o.examples); err != nil {
			return nil, nil, nil, &ExitError{Code: ExitLoad, Err: err}
		}
		var mu sync.Mutex
		cs, err := conformance.ExampleCases(examples, o.updateExamples, func(name string, steps []json.RawMessage) {
			mu.Lock()
			observed[name] = steps
			mu.Unlock()
		})
		if err != nil {
			return nil, nil, nil, &ExitError{Code: ExitLoad, Err: err}
		}
		reg.Add(cs...)
	}
	if o.x.n < 0 {
		return nil, nil, nil, usage(errors.New("--explore takes a number of exchanges, at least 1"))
	}
	if o.x.n > 0 && o.runtime == "" {
		if o.examples != "" {
			return nil, nil, nil, usage(errors.New("--explore runs generated exchanges instead of the cases; drop --examples"))
		}
		if o.x.seed == 0 {
			o.x.seed = uint64(time.Now().UnixNano())
		}
		reg = conformance.ExploreSuite(o.x.n, o.x.seed)
	}
	return reg, examples, observed, nil
}

// write writes the report in the --output format, then the JUnit file,
// the artifacts and the examples' golden file the flags ask for.
func (o *runOpts) write(app *App, rep *conformance.Report, examples *conformance.ExamplesFile, observed map[string][]json.RawMessage) error {
	var err error
	switch o.out {
	case "json":
		err = conformance.WriteJSON(app.Out, rep, o.trace)
	default:
		err = conformance.WriteText(app.Out, rep, o.verbose, o.trace)
	}
	if err != nil {
		return err
	}
	if o.junit != "" {
		if err := writeFile(o.junit, func(w io.Writer) error { return conformance.WriteJUnit(w, rep) }); err != nil {
			return err
		}
	}
	if o.artifacts != "" {
		if err := conformance.WriteArtifacts(o.artifacts, rep); err != nil {
			return err
		}
	}
	if o.updateExamples {
		if err := conformance.WriteExamplesGolden(examples, observed); err != nil {
			return fmt.Errorf("update %s: %w", examples.Golden, err)
		}
		fmt.Fprintf(app.Err, "wrote %s (%d examples); review its diff before committing it\n", examples.Golden, len(examples.Examples))
	}
	return nil
}

// wrongKind is called when the binary given to --runtime or --plugin did
// not start as one: it tries the other handshake and, when that one
// works, returns one sentence saying what the binary is and which flag
// fits; "" otherwise.
func wrongKind(ctx context.Context, o *runOpts, hopts pluginhost.Options) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if o.runtime != "" {
		p, err := pluginhost.Load(ctx, o.runtime, hopts)
		if err != nil {
			return ""
		}
		name := p.Name()
		p.Close()
		return fmt.Sprintf("%s is an abkit plugin (%q), not a runtime: test it with 'conformance run --plugin %s'", o.runtime, name, o.runtime)
	}
	s, err := runtimesuite.Launcher{Path: o.plugin}.Launch(ctx)
	if err != nil {
		return ""
	}
	s.Close()
	return fmt.Sprintf("%s is an abkit runtime, not a plugin: test it with 'conformance run --runtime %s'", o.plugin, o.plugin)
}

func compile(pats []string, flag string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range pats {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, usage(fmt.Errorf("%s %q: %w", flag, p, err))
		}
		out = append(out, re)
	}
	return out, nil
}

func writeFile(path string, f func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f(fh); err != nil {
		fh.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return fh.Close()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newVersionCmd(app *App) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print conformance's version, commit and build date",
		Long: `Print the module version, the commit conformance was built from and the
build date (see abctl version for where each comes from). Report it with
any conformance result you share: cases change between versions.`,
		Example: "  conformance version\n  conformance --version\n  conformance version -o json",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := buildinfo.Read(app.Version, app.Commit, app.Date)
			switch output {
			case "text":
				_, err := fmt.Fprintf(app.Out, "conformance %s\n", v)
				return err
			case "json":
				enc := json.NewEncoder(app.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			}
			return usage(fmt.Errorf("unknown output format %q; use text or json", output))
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return c
}

// pluginProgram resolves --plugin: a path as given, or a bare program name
// (python3, node) through PATH, as a shell would, so that an interpreted
// plugin can be given as a command line with --plugin-arg.
func pluginProgram(name string) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/') {
		return name, nil
	}
	if _, err := os.Stat(name); err == nil {
		return name, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("--plugin %s: no such file, and not a program in PATH: %w", name, err)
	}
	return p, nil
}
